// A libtorch-style autograd program built against the installed lazytensor::torch headers with
// no edit but the device (argv[1]: "cpu" or "lazy"): reverse mode through C++ control flow,
// vector-Jacobian products, a gradient penalty through torch::autograd::grad with create_graph,
// and two custom autograd functions. Exits non-zero if a gradient differs from its closed form.
#include <torch/torch.h>

#include <cmath>
#include <iostream>
#include <string>

using namespace torch::autograd;

namespace {

int failures = 0;

void check(const std::string& what, const torch::Tensor& got, const torch::Tensor& want) {
  const bool ok = got.defined() && got.sizes() == want.sizes() &&
                  got.to(torch::kCPU).allclose(want.to(torch::kCPU), 1e-4, 1e-5);
  std::cout << (ok ? "ok   " : "FAIL ") << what << "\n";
  if (!ok) {
    std::cout << "got\n" << got << "\nwant\n" << want << "\n";
    ++failures;
  }
}

// y = a * x^2 + sin(x) per element, differentiated through a loop that doubles until large.
void reverse_mode(const torch::Device& device) {
  torch::Tensor x = torch::linspace(-1, 1, 5, torch::device(device)).requires_grad_();
  torch::Tensor y = 3 * x * x + torch::sin(x);
  std::cout << "grad_fn of y: " << y.grad_fn()->name() << "\n";
  y.sum().backward();
  torch::Tensor xv = x.detach();
  check("d/dx sum(3x^2 + sin x)", x.grad(), 6 * xv + torch::cos(xv));

  torch::Tensor z = torch::tensor({0.5, -0.25, 1.0}, torch::device(device)).requires_grad_();
  torch::Tensor w = z * 2;
  int doublings = 1;
  while (w.norm().item<double>() < 100) {
    w = w * 2;
    ++doublings;
  }
  torch::Tensor v = torch::tensor({0.1, 1.0, 1e-3}, torch::kFloat).to(device);
  w.backward(v);  // a vector-Jacobian product: v * 2^doublings
  check("vector-Jacobian product", z.grad(), v * std::pow(2.0, doublings));
  {
    torch::NoGradGuard no_grad;
    if (z.pow(2).requires_grad()) ++failures;
  }
  if (z.detach().requires_grad() || !z.eq(z.detach()).all().item<bool>()) ++failures;
}

// Penalizes the norm of d(output)/d(input) of a linear layer: that gradient is the weight's
// column sums whatever the input, so the penalty's gradient in the weight is known exactly.
void gradient_penalty(const torch::Device& device) {
  torch::manual_seed(0);
  torch::nn::Linear layer(4, 3);
  layer->to(device);
  torch::Tensor input = torch::randn({6, 4}).to(device).requires_grad_(true);
  torch::Tensor out = layer(input);
  torch::Tensor g = torch::autograd::grad({out}, {input}, {torch::ones_like(out)},
                                          /*retain_graph=*/true, /*create_graph=*/true)[0];
  torch::Tensor colsum = layer->weight.detach().sum(0);
  check("d(out)/d(input)", g, colsum.unsqueeze(0).expand({6, 4}));
  torch::Tensor penalty = torch::pow(g.norm(2, 1) - 1, 2).mean();
  penalty.backward();
  // penalty = (|c| - 1)^2 with c the column sums, so d/dW_jk = 2 (|c| - 1) c_k / |c|.
  torch::Tensor n = colsum.norm();
  check("gradient penalty in the weight", layer->weight.grad(),
        (2 * (n - 1) * colsum / n).unsqueeze(0).expand({3, 4}));
}

class ScaledSquare : public Function<ScaledSquare> {  // k * x^2, k a plain double
 public:
  static torch::Tensor forward(AutogradContext* ctx, torch::Tensor x, double k) {
    ctx->save_for_backward({x});
    ctx->saved_data["k"] = k;
    return k * x * x;
  }
  static tensor_list backward(AutogradContext* ctx, tensor_list grads) {
    torch::Tensor x = ctx->get_saved_variables()[0];
    return {grads[0] * 2 * ctx->saved_data["k"].toDouble() * x, torch::Tensor()};
  }
};

class BilinearForm : public Function<BilinearForm> {  // sum_ij a_i M_ij b_j, per row of a, b
 public:
  static torch::Tensor forward(AutogradContext* ctx, torch::Tensor a, torch::Tensor m,
                               torch::Tensor b) {
    ctx->save_for_backward({a, m, b});
    return (a.mm(m) * b).sum(1);
  }
  static tensor_list backward(AutogradContext* ctx, tensor_list grads) {
    tensor_list s = ctx->get_saved_variables();
    torch::Tensor g = grads[0].unsqueeze(1);
    return {g * s[2].mm(s[1].t()), s[0].t().mm(g * s[2]), g * s[0].mm(s[1])};
  }
};

void custom_functions(const torch::Device& device) {
  torch::Tensor x = torch::tensor({1.0, -2.0, 0.5}, torch::device(device)).requires_grad_();
  ScaledSquare::apply(x, 1.5).sum().backward();
  check("custom k x^2", x.grad(), 3 * x.detach());

  torch::manual_seed(1);
  torch::Tensor a = torch::randn({2, 3}).to(device).requires_grad_();
  torch::Tensor m = torch::randn({3, 4}).to(device).requires_grad_();
  torch::Tensor b = torch::randn({2, 4}).to(device).requires_grad_();
  torch::Tensor y = BilinearForm::apply(a, m, b);
  torch::Tensor ref_a = a.detach().clone().requires_grad_();
  torch::Tensor ref_m = m.detach().clone().requires_grad_();
  torch::Tensor ref_b = b.detach().clone().requires_grad_();
  torch::Tensor ref = (ref_a.mm(ref_m) * ref_b).sum(1);
  check("custom bilinear form: value", y, ref);
  y.sum().backward();
  ref.sum().backward();
  check("custom bilinear form: d/da", a.grad(), ref_a.grad());
  check("custom bilinear form: d/dM", m.grad(), ref_m.grad());
  check("custom bilinear form: d/db", b.grad(), ref_b.grad());
}

}  // namespace

int main(int argc, char** argv) {
  const torch::Device device(argc > 1 ? std::string(argv[1]) : std::string("cpu"));
  reverse_mode(device);
  gradient_penalty(device);
  custom_functions(device);
  std::cout << device.str() << ": " << failures << " failures\n";
  return failures == 0 ? 0 : 1;
}
