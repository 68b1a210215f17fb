# Regenerates the PyTorch reference values of the ranking and embedding losses in
# tests/test_nn_functional.cpp (/usr/bin/python3 tests/reference/loss_golden.py, Debian's
# python3-torch). Inputs are filled by the formula the C++ test repeats.
import torch
import torch.nn.functional as F

from golden import filled


def show(name, t):
    print("%s = {%s};" % (name, ", ".join("%.17g" % v for v in t.reshape(-1).tolist())))


a, b, c = filled((4, 5), 1), filled((4, 5), 2), filled((4, 5), 3)
sign = torch.tensor([1.0, -1.0, -1.0, 1.0])
show("k_margin_ranking", F.margin_ranking_loss(a[:, 0], b[:, 0], sign, margin=0.1,
                                                reduction="none"))
show("k_margin_ranking_mean", F.margin_ranking_loss(a[:, 0], b[:, 0], sign))
show("k_cosine_embedding", F.cosine_embedding_loss(a, b, sign, margin=-0.2, reduction="none"))
show("k_cosine_embedding_sum", F.cosine_embedding_loss(a, b, sign, reduction="sum"))
show("k_triplet", F.triplet_margin_loss(a, b, c, reduction="none"))
show("k_triplet_swap_p1", F.triplet_margin_loss(a, b, c, margin=0.3, p=1, swap=True,
                                                 reduction="none"))
show("k_triplet_mean", F.triplet_margin_loss(a, b, c, margin=0.5))
