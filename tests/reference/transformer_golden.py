# Regenerates the PyTorch reference values in tests/test_transformer.cpp (run with Debian's
# python3-torch: /usr/bin/python3 tests/reference/transformer_golden.py). Parameters and inputs
# are filled by a formula that the C++ test repeats; parameters are numbered by the sorted order
# of their names, because libtorch and Python register a decoder layer's parts in other orders.
import torch

from golden import emit, fill_ as fill

nn = torch.nn


def params(m):
    named = dict(m.named_parameters())
    for k, name in enumerate(sorted(named)):
        fill(named[name], k)


def causal(n):
    return torch.triu(torch.full((n, n), float("-inf")), diagonal=1)


# Inputs: the filled tensors numbered 100 and up.
m = nn.TransformerDecoderLayer(8, 2, dim_feedforward=12, dropout=0.0)
params(m)
tgt, mem = fill(torch.empty(3, 2, 8), 100), fill(torch.empty(4, 2, 8), 101)
kpm = torch.tensor([[False, False, True, False], [False, False, False, False]])
emit("decoder_layer", m(tgt, mem, tgt_mask=causal(3), memory_key_padding_mask=kpm))

m = nn.TransformerDecoderLayer(8, 2, dim_feedforward=12, dropout=0.0, activation="gelu",
                               norm_first=True, batch_first=True, layer_norm_eps=1e-3)
params(m)
tgt, mem = fill(torch.empty(2, 3, 8), 100), fill(torch.empty(2, 4, 8), 101)
mmask = torch.tensor([[False, True, False, False], [False, False, True, True],
                      [True, False, False, False]])
tkpm = torch.tensor([[False, False, False], [False, True, False]])
emit("decoder_layer_norm_first",
     m(tgt, mem, memory_mask=mmask, tgt_key_padding_mask=tkpm))

m = nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, dim_feedforward=12, dropout=0.0), 2,
                          norm=nn.LayerNorm(8))
params(m)
src = fill(torch.empty(4, 2, 8), 100)
emit("encoder", m(src, src_key_padding_mask=kpm))

m = nn.Transformer(d_model=8, nhead=2, num_encoder_layers=2, num_decoder_layers=1,
                   dim_feedforward=12, dropout=0.0)
params(m)
src = fill(torch.empty(4, 2, 8), 100).requires_grad_()
tgt = fill(torch.empty(3, 2, 8), 101)
out = m(src, tgt, tgt_mask=nn.Transformer.generate_square_subsequent_mask(3))
emit("transformer", out)
(out * fill(torch.empty(3, 2, 8), 102)).sum().backward()
emit("transformer_grad_src", src.grad)
emit("transformer_grad_w", m.decoder.layers[0].multihead_attn.in_proj_weight.grad)
