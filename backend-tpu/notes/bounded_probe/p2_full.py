from common import *
import time
D = 'tensor<?x4xf32, #stablehlo.bounds<8, ?>>'
E = 'tensor<?x3xf32, #stablehlo.bounds<8, ?>>'
text = f'''
module @m {{
  func.func public @main(%x: tensor<8x4xf32>, %y: tensor<8x3xf32>, %w: tensor<4x3xf32>, %n: tensor<i32>)
      -> (tensor<4xf32>, tensor<4xf32>, tensor<4x3xf32>, tensor<i32>, tensor<4xf32>) {{
    %d = stablehlo.set_dimension_size %x, %n, dim = 0 : (tensor<8x4xf32>, tensor<i32>) -> {D}
    %e = stablehlo.set_dimension_size %y, %n, dim = 0 : (tensor<8x3xf32>, tensor<i32>) -> {E}
    %z = stablehlo.constant dense<0.0> : tensor<f32>
    %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>
    // 1. plain sum over dynamic dim
    %sum = stablehlo.reduce(%d init: %z) applies stablehlo.add across dimensions = [0] : ({D}, tensor<f32>) -> tensor<4xf32>
    // 2. elementwise add (d + d), then sum
    %dd = stablehlo.add %d, %d : {D}
    %sum2 = stablehlo.reduce(%dd init: %z) applies stablehlo.add across dimensions = [0] : ({D}, tensor<f32>) -> tensor<4xf32>
    // 3. softmax-like over dim 0: m = max; s = sum(exp(x - m)); return s (logsumexp denominators)
    %m = stablehlo.reduce(%d init: %ninf) applies stablehlo.maximum across dimensions = [0] : ({D}, tensor<f32>) -> tensor<4xf32>
    %mb = stablehlo.broadcast_in_dim %m, dims = [1] : (tensor<4xf32>) -> {D}
    %xm = stablehlo.subtract %d, %mb : {D}
    %ex = stablehlo.exponential %xm : {D}
    %se = stablehlo.reduce(%ex init: %z) applies stablehlo.add across dimensions = [0] : ({D}, tensor<f32>) -> tensor<4xf32>
    // 4. dot_general contracting the dynamic dim: d^T e -> 4x3
    %dot = stablehlo.dot_general %d, %e, contracting_dims = [0] x [0] : ({D}, {E}) -> tensor<4x3xf32>
    // 5. get_dimension_size
    %s = stablehlo.get_dimension_size %d, dim = 0 : ({D}) -> tensor<i32>
    return %sum, %sum2, %dot, %s, %se : tensor<4xf32>, tensor<4xf32>, tensor<4x3xf32>, tensor<i32>, tensor<4xf32>
  }}
}}
'''
print(text)
t=time.time(); exe = compile_text(text); print('compile s', time.time()-t)
rng = np.random.default_rng(0)
X = rng.standard_normal((8,4)).astype(np.float32)
Y = rng.standard_normal((8,3)).astype(np.float32)
W = rng.standard_normal((4,3)).astype(np.float32)
ok = True
for garbage in (1e6, np.nan, np.inf):
  for n in (3,5,8):
    x = X.copy(); y = Y.copy(); x[n:] = garbage; y[n:] = garbage
    outs = [np.asarray(o) for o in run(exe, x, y, W, np.int32(n))]
    xv, yv = X[:n], Y[:n]
    ref = [xv.sum(0), (2*xv).sum(0), xv.T@yv, np.int32(n), np.exp(xv - xv.max(0)).sum(0)]
    good = [np.allclose(a,b,rtol=1e-5,atol=1e-5) for a,b in zip(outs,ref)]
    ok &= all(good)
    print(f'garbage={garbage} n={n} match={good}')
    if not all(good):
        for a,b in zip(outs,ref): print('  got', a.ravel()[:6], 'want', np.asarray(b).ravel()[:6])
print('ALL OK', ok)
print(exe.get_hlo_text())
