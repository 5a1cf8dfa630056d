"""A real torch.nn module's checkpoint and outputs, for oxtorch's state-dict round trip.

Run with the reference venv: `python tests/golden/make_golden_nn_module.py`. Writes
tests/golden/nn_module_state.safetensors (the module's state_dict, as `safetensors.torch.save_file`
writes it) and tests/golden/nn_module_io.safetensors (input, eval-mode output, train-mode output
and the running statistics after that training-mode forward, and parameter gradients).
"""
import os

import torch
import torch.nn as nn
from safetensors.torch import save_file

torch.manual_seed(0)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 4, 3, padding=1)
        self.bn = nn.BatchNorm2d(4)
        self.fc = nn.Sequential(nn.Flatten(), nn.Linear(64, 16), nn.ReLU(), nn.Linear(16, 3))
        self.ln = nn.LayerNorm(3)

    def forward(self, x):
        return self.ln(self.fc(torch.relu(self.bn(self.conv(x)))))


net = Net()
with torch.no_grad():
    net.bn.running_mean.uniform_(-0.5, 0.5)
    net.bn.running_var.uniform_(0.5, 1.5)
    net.ln.weight.uniform_(0.5, 1.5)
here = os.path.dirname(__file__)
save_file({k: v.contiguous() for k, v in net.state_dict().items()}, os.path.join(here, "nn_module_state.safetensors"))

x = torch.randn(2, 1, 4, 4)
net.eval()
y_eval = net(x)
net.train()
y_train = net(x)
y_train.sum().backward()
io = {
    "x": x,
    "y_eval": y_eval.detach(),
    "y_train": y_train.detach(),
    "running_mean": net.bn.running_mean.clone(),
    "running_var": net.bn.running_var.clone(),
    "num_batches_tracked": net.bn.num_batches_tracked.clone(),
}
for name, p in net.named_parameters():
    io["grad." + name] = p.grad
save_file(io, os.path.join(here, "nn_module_io.safetensors"))
print("keys:", list(net.state_dict().keys()))
