# PyTorch 1.13's values for tests/test_ctc_loss.cpp: ctc_loss of log_softmax(filled logits) of
# shape [T=6, N=3, C=4] with padded targets [[1, 1, 2], [3, 0, 0], [2, 3, 0]] (lengths 3, 1, 2:
# a repeated label, which needs a blank between) and input lengths 6, 4, 5; each reduction, the
# loss and its gradient with respect to the logits and (PyTorch's own rule) to log_probs taken
# as a leaf. Then an impossible alignment (lengths 3 and 2, zero_infinity off and on), a target
# of length 0, and blank = 3.
import torch

from golden import emit, filled

T, N, C = 6, 3, 4
targets = torch.tensor([[1, 1, 2], [3, 0, 0], [2, 3, 0]])
input_lengths = [6, 4, 5]
target_lengths = [3, 1, 2]
for reduction in ("none", "mean", "sum"):
    x = filled((T, N, C), 1).requires_grad_(True)
    lp = x.log_softmax(2)
    lp.retain_grad()
    loss = torch.nn.functional.ctc_loss(lp, targets, input_lengths, target_lengths,
                                        reduction=reduction)
    w = filled(loss.shape, 2) if reduction == "none" else torch.tensor(1.0)
    (loss * w).sum().backward()
    emit("ctc_%s" % reduction, loss)
    emit("ctc_%s_glogits" % reduction, x.grad)
    emit("ctc_%s_glp" % reduction, lp.grad)
# Sample 0 cannot align [1, 1, 2] in 2 steps (it needs 4): inf, or 0 with zero_infinity.
for zero_infinity in (False, True):
    x = filled((T, N, C), 1).requires_grad_(True)
    loss = torch.nn.functional.ctc_loss(x.log_softmax(2), targets, [2, 4, 5], target_lengths,
                                        reduction="none", zero_infinity=zero_infinity)
    assert torch.isinf(loss[0]) != zero_infinity
    emit("ctc_impossible_%d_rest" % zero_infinity, loss[1:])  # loss[0]: inf, or 0
    if zero_infinity:
        loss.sum().backward()
        emit("ctc_impossible_glogits", x.grad)
# A target of length 0 and blank = 3 (targets then use 0..2), mean reduction.
x = filled((T, N, C), 1).requires_grad_(True)
targets3 = torch.tensor([[0, 0, 2], [1, 0, 0], [2, 1, 0]])
loss = torch.nn.functional.ctc_loss(x.log_softmax(2), targets3, [6, 4, 5], [3, 0, 2], blank=3)
loss.backward()
emit("ctc_blank3", loss)
emit("ctc_blank3_glogits", x.grad)
