# Regenerates the PyTorch reference values in tests/test_rnn.cpp (run with Debian's
# python3-torch: /usr/bin/python3 tests/reference/rnn_golden.py). Parameters, inputs and states
# are filled by formulas that the C++ test repeats, so no weights need to be stored.
import torch

from golden import fill_ as fill, values


def params(m):
    for k, (name, p) in enumerate(m.named_parameters()):
        fill(p, k)


def case(name, m, x, *state):
    params(m)
    out = m(x, *state)
    print("// %s" % name)
    if isinstance(out, tuple) and isinstance(out[1], tuple):
        print("%s_out = %s;" % (name, values(out[0])))
        print("%s_h = %s;" % (name, values(out[1][0])))
        print("%s_c = %s;" % (name, values(out[1][1])))
    elif isinstance(out, tuple):
        for i, o in enumerate(out):
            print("%s_%d = %s;" % (name, i, values(o)))
    else:
        print("%s_out = %s;" % (name, values(out)))


nn = torch.nn
# Inputs: the filled tensors numbered 100 and up, states 200 and up.
case("lstm", nn.LSTM(3, 4, num_layers=2, bidirectional=True), fill(torch.empty(3, 2, 3), 100),
     (fill(torch.empty(4, 2, 4), 200), fill(torch.empty(4, 2, 4), 201)))
case("gru", nn.GRU(3, 4, num_layers=2, batch_first=True), fill(torch.empty(2, 3, 3), 100))
case("rnn_relu", nn.RNN(3, 4, bidirectional=True, bias=False, nonlinearity="relu"),
     fill(torch.empty(3, 3), 100), fill(torch.empty(2, 4), 200))
case("lstm_proj", nn.LSTM(3, 4, proj_size=2), fill(torch.empty(3, 2, 3), 100))
case("lstm_cell", nn.LSTMCell(3, 4), fill(torch.empty(2, 3), 100),
     (fill(torch.empty(2, 4), 200), fill(torch.empty(2, 4), 201)))
case("gru_cell", nn.GRUCell(3, 4), fill(torch.empty(2, 3), 100), fill(torch.empty(2, 4), 200))
case("rnn_cell", nn.RNNCell(3, 4), fill(torch.empty(3), 100), fill(torch.empty(4), 200))
