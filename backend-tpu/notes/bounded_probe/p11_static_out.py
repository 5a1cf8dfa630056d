from common import *
text = '''
module @m {
  func.func public @main(%x: tensor<8x4xf32>, %n: tensor<i32>) -> tensor<8x4xf32> {
    %d = stablehlo.set_dimension_size %x, %n, dim = 0 : (tensor<8x4xf32>, tensor<i32>) -> tensor<?x4xf32, #stablehlo.bounds<8, ?>>
    %p = stablehlo.add %d, %d : tensor<?x4xf32, #stablehlo.bounds<8, ?>>
    %c8 = stablehlo.constant dense<8> : tensor<i32>
    %s = stablehlo.set_dimension_size %p, %c8, dim = 0 : (tensor<?x4xf32, #stablehlo.bounds<8, ?>>, tensor<i32>) -> tensor<8x4xf32>
    return %s : tensor<8x4xf32>
  }
}'''
exe = compile_text(text)
print('\n'.join(l.split(', metadata')[0] for l in exe.get_hlo_text().splitlines() if l.strip()))
X = np.arange(32, dtype=np.float32).reshape(8,4); X[3:] = 1e6
print(np.asarray(run(exe, X, np.int32(3))[0]))
