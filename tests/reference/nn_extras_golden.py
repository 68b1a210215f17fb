# Regenerates the PyTorch reference values in tests/test_nn_extras.cpp (run with Debian's
# python3-torch: /usr/bin/python3 tests/reference/nn_extras_golden.py). Inputs and loss weights
# are filled by a formula that the C++ test repeats.
import math
import torch

from golden import emit, filled


def fill(shape, k):
    return filled(shape, k).requires_grad_()


F = torch.nn.functional
LA = torch.linalg


def case(name, fn, x_shape):
    x = fill(x_shape, 100)
    y = fn(x)
    emit(name, y)
    (y * fill(list(y.shape), 103)).sum().backward()
    if x.grad is not None:  # the 0-"norm" (a count) has no gradient
        emit(name + "_dx", x.grad)


case("unfold", lambda x: F.unfold(x, (2, 3), dilation=(2, 1), padding=(1, 0), stride=(1, 2)),
     [2, 3, 5, 6])
case("fold", lambda x: F.fold(x, (5, 6), (2, 3), dilation=(2, 1), padding=(1, 0), stride=(1, 2)),
     [2, 18, 10])
mask = torch.tensor([[True, False, True], [False, False, True]])
case("masked_scatter", lambda x: fill([2, 2, 3], 101).detach().masked_scatter(mask, x), [7])
for name, ord_ in [("0", 0), ("3", 3), ("m1", -1), ("inf", math.inf), ("minf", -math.inf)]:
    case("vector_norm_" + name, lambda x: LA.vector_norm(x, ord_, dim=(0, 2)), [3, 2, 4])
for name, ord_ in [("fro", "fro"), ("1", 1), ("m1", -1), ("inf", math.inf), ("minf", -math.inf)]:
    case("matrix_norm_" + name, lambda x: LA.matrix_norm(x, ord_), [2, 3, 4])

# embedding_bag: weight filled 101, indices fixed; the gradient is the weight's.
idx2 = torch.tensor([[1, 0, 3], [2, 2, 4]])
idx1 = torch.tensor([4, 1, 1, 0, 3, 2, 0])
offsets = torch.tensor([0, 3, 3, 5])
psw = fill([7], 104).detach()
for name, fn in [
        ("bag_2d_mean_pad", lambda w: F.embedding_bag(idx2, w, mode="mean", padding_idx=0)),
        ("bag_1d_sum_psw", lambda w: F.embedding_bag(idx1, w, offsets, mode="sum",
                                                     per_sample_weights=psw)),
        ("bag_1d_max_last", lambda w: F.embedding_bag(idx1, w, torch.tensor([0, 3, 3, 7]),
                                                      mode="max", include_last_offset=True)),
        ("bag_1d_mean", lambda w: F.embedding_bag(idx1, w, offsets, mode="mean"))]:
    case(name, fn, [5, 3])

# adaptive max pooling: values (with their gradient) and the indices
for name, fn, shape in [
        ("amax2d", lambda x: F.adaptive_max_pool2d(x, (3, 4), return_indices=True), [2, 3, 5, 7]),
        ("amax1d", lambda x: F.adaptive_max_pool1d(x, 4, return_indices=True), [2, 3, 10])]:
    x = fill(shape, 100)
    y, i = fn(x)
    emit(name, y)
    emit(name + "_idx", i.double())
    (y * fill(list(y.shape), 103)).sum().backward()
    emit(name + "_dx", x.grad)
