// lt::optim: SGD (momentum, dampening, nesterov, weight decay), Adam and AdamW step by step
// against a hand-written float64 reference of torch.optim's update rules, on cpu and lazy; the
// lazy device's barrier at the end of step(); learning-rate schedules, which must not make the
// lazy device recompile; and option validation.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "lt/lt.h"

namespace {

using lt::Tensor;
const lt::Device kLazy("lazy");
const lt::Device kCpu("cpu");
using Vec = std::vector<double>;

std::vector<double> dv(const Tensor& t) { return t.cpu().to(lt::kFloat64).to_vector<double>(); }

// ---- the reference: torch.optim's single-tensor update rules, written out in double

struct RefState {
  bool has_buf = false;
  Vec buf, m, v;
  int64_t step = 0;  // per parameter, as torch.optim counts it
};

struct RefSGD {
  double lr, momentum = 0, dampening = 0, weight_decay = 0;
  bool nesterov = false;
  void update(Vec& p, const Vec& g, RefState& s) const {
    Vec d(p.size());
    for (size_t i = 0; i < p.size(); ++i) d[i] = g[i] + weight_decay * p[i];
    if (momentum != 0) {
      if (!s.has_buf) {
        s.buf = d;
        s.has_buf = true;
      } else {
        for (size_t i = 0; i < p.size(); ++i)
          s.buf[i] = momentum * s.buf[i] + (1 - dampening) * d[i];
      }
      for (size_t i = 0; i < p.size(); ++i) d[i] = nesterov ? d[i] + momentum * s.buf[i] : s.buf[i];
    }
    for (size_t i = 0; i < p.size(); ++i) p[i] -= lr * d[i];
  }
};

struct RefAdam {
  double lr, b1 = 0.9, b2 = 0.999, eps = 1e-8, weight_decay = 0;
  bool decoupled = false;
  void update(Vec& p, const Vec& g_in, RefState& s) const {
    if (s.m.empty()) s.m = s.v = Vec(p.size(), 0.0);
    ++s.step;
    Vec g = g_in;
    for (size_t i = 0; i < p.size(); ++i) {
      if (decoupled)
        p[i] *= 1 - lr * weight_decay;
      else
        g[i] += weight_decay * p[i];
      s.m[i] = b1 * s.m[i] + (1 - b1) * g[i];
      s.v[i] = b2 * s.v[i] + (1 - b2) * g[i] * g[i];
      const double bc1 = 1 - std::pow(b1, static_cast<double>(s.step));
      const double bc2 = 1 - std::pow(b2, static_cast<double>(s.step));
      p[i] -= lr / bc1 * s.m[i] / (std::sqrt(s.v[i]) / std::sqrt(bc2) + eps);
    }
  }
};

// ---- the problem: three float64 parameters under loss sum(c/2 p^2 + d p), gradient c p + d.
// The third only takes part from step `late` on (its grad is None before, so it is skipped).

struct Problem {
  std::vector<Vec> init = {{0.5, -1.0, 2.0, 0.25, -0.75, 1.5, -2.0, 0.1, 0.0, 1.0, -0.3, 0.7},
                           {1.0, -2.0, 0.5, 3.0},
                           {-1.5, 0.8}};
  std::vector<std::vector<int64_t>> shapes = {{3, 4}, {4}, {2}};
  std::vector<Vec> c = {{1.0, 0.5, 2.0, 1.5, 0.2, 3.0, 1.0, 0.7, 0.9, 2.5, 1.1, 0.4},
                        {0.3, 1.7, 2.2, 0.8},
                        {1.2, 0.6}};
  std::vector<Vec> d = {{0.1, -0.2, 0.3, 0.0, 0.5, -0.1, 0.2, 0.4, -0.6, 0.05, 0.0, 0.2},
                        {-0.5, 0.25, 0.0, 1.0},
                        {0.3, -0.4}};
  int late = 3;
  bool active(size_t i, int step) const { return i < 2 || step >= late; }
};

std::vector<Tensor> make_params(const Problem& pb, lt::Device dev) {
  std::vector<Tensor> ps;
  for (size_t i = 0; i < pb.init.size(); ++i)
    ps.push_back(lt::tensor(pb.init[i], pb.shapes[i]).to(dev).requires_grad_());
  return ps;
}

// One training step's forward and backward (step numbers start at 1).
void backward(const Problem& pb, const std::vector<Tensor>& ps, int step) {
  lt::Device dev = ps[0].device();
  Tensor loss;
  for (size_t i = 0; i < ps.size(); ++i) {
    if (!pb.active(i, step)) continue;
    Tensor c = lt::tensor(pb.c[i], pb.shapes[i]).to(dev);
    Tensor d = lt::tensor(pb.d[i], pb.shapes[i]).to(dev);
    Tensor term = (c * ps[i] * ps[i] * 0.5 + d * ps[i]).sum();
    loss = loss.defined() ? loss + term : term;
  }
  loss.backward();
}

template <typename Ref>
void reference_step(const Problem& pb, const Ref& ref, std::vector<Vec>& p,
                    std::vector<RefState>& st, int step) {
  for (size_t i = 0; i < p.size(); ++i) {
    if (!pb.active(i, step)) continue;
    Vec g(p[i].size());
    for (size_t j = 0; j < g.size(); ++j) g[j] = pb.c[i][j] * p[i][j] + pb.d[i][j];
    ref.update(p[i], g, st[i]);
  }
}

using MakeOpt = std::function<std::unique_ptr<lt::optim::Optimizer>(std::vector<Tensor>)>;

template <typename Ref>
void check_against_reference(const std::string& what, const MakeOpt& make, const Ref& ref,
                             int steps = 6) {
  for (lt::Device dev : {kCpu, kLazy}) {
    SCOPED_TRACE(what + " on " + dev.str());
    Problem pb;
    std::vector<Tensor> ps = make_params(pb, dev);
    std::unique_ptr<lt::optim::Optimizer> opt = make(ps);
    std::vector<Vec> p = pb.init;
    std::vector<RefState> st(p.size());
    for (int step = 1; step <= steps; ++step) {
      opt->zero_grad();
      backward(pb, ps, step);
      opt->step();
      reference_step(pb, ref, p, st, step);
      for (size_t i = 0; i < ps.size(); ++i) {
        EXPECT_TRUE(ps[i].device() == dev);
        EXPECT_EQ(ps[i].dtype(), lt::kFloat64);
        std::vector<double> got = dv(ps[i]);
        for (size_t j = 0; j < got.size(); ++j)
          ASSERT_NEAR(got[j], p[i][j], 1e-12 + 1e-10 * std::fabs(p[i][j]))
              << "step " << step << ", param " << i << "[" << j << "]";
      }
    }
    // The late parameter really moved, and only from its first gradient on.
    EXPECT_NE(dv(ps[2]), pb.init[2]);
  }
}

class Optim : public ::testing::Test {
 protected:
  void SetUp() override { lt::mark_step(); }
  void TearDown() override { lt::mark_step(); }
};

TEST_F(Optim, SgdMatchesReference) {
  struct Case {
    std::string what;
    lt::optim::SGDOptions opts;
    RefSGD ref;
  };
  const std::vector<Case> cases = {
      {"plain", lt::optim::SGDOptions(0.1), {0.1}},
      {"momentum", lt::optim::SGDOptions(0.05).momentum(0.9), {0.05, 0.9}},
      {"dampening", lt::optim::SGDOptions(0.05).momentum(0.8).dampening(0.3), {0.05, 0.8, 0.3}},
      {"nesterov",
       lt::optim::SGDOptions(0.05).momentum(0.9).nesterov(true),
       {0.05, 0.9, 0, 0, true}},
      {"weight_decay", lt::optim::SGDOptions(0.1).weight_decay(0.05), {0.1, 0, 0, 0.05}},
      {"all",
       lt::optim::SGDOptions(0.07).momentum(0.5).weight_decay(0.02).nesterov(true),
       {0.07, 0.5, 0, 0.02, true}},
      {"momentum+dampening+wd",
       lt::optim::SGDOptions(0.03).momentum(0.7).dampening(0.5).weight_decay(0.1),
       {0.03, 0.7, 0.5, 0.1}},
  };
  for (const Case& c : cases)
    check_against_reference(
        "SGD " + c.what,
        [&](std::vector<Tensor> ps) {
          return std::make_unique<lt::optim::SGD>(std::move(ps), c.opts);
        },
        c.ref);
}

TEST_F(Optim, AdamMatchesReference) {
  check_against_reference(
      "Adam default",
      [](std::vector<Tensor> ps) {
        return std::make_unique<lt::optim::Adam>(std::move(ps), lt::optim::AdamOptions(0.01));
      },
      RefAdam{0.01});
  check_against_reference(
      "Adam betas/eps/weight_decay",
      [](std::vector<Tensor> ps) {
        return std::make_unique<lt::optim::Adam>(
            std::move(ps),
            lt::optim::AdamOptions(0.05).betas({0.8, 0.99}).eps(1e-3).weight_decay(0.1));
      },
      RefAdam{0.05, 0.8, 0.99, 1e-3, 0.1});
}

TEST_F(Optim, AdamWMatchesReference) {
  check_against_reference(
      "AdamW default",
      [](std::vector<Tensor> ps) {
        return std::make_unique<lt::optim::AdamW>(std::move(ps), lt::optim::AdamWOptions(0.01));
      },
      RefAdam{0.01, 0.9, 0.999, 1e-8, 0.01, true});
  lt::optim::AdamWOptions o(0.02);
  o.betas({0.7, 0.95}).eps(1e-6).weight_decay(0.3);
  check_against_reference(
      "AdamW custom",
      [&](std::vector<Tensor> ps) { return std::make_unique<lt::optim::AdamW>(std::move(ps), o); },
      RefAdam{0.02, 0.7, 0.95, 1e-6, 0.3, true});
  EXPECT_EQ(lt::optim::AdamWOptions().weight_decay_, 0.01);
  EXPECT_EQ(lt::optim::AdamOptions().weight_decay_, 0.0);
  EXPECT_EQ(lt::optim::AdamOptions().lr_, 1e-3);
}

TEST_F(Optim, ZeroGradSetsGradientsToNone) {
  Problem pb;
  std::vector<Tensor> ps = make_params(pb, kCpu);
  lt::optim::SGD opt(ps, lt::optim::SGDOptions(0.1));
  backward(pb, ps, 5);
  for (const Tensor& p : ps) EXPECT_TRUE(p.grad().defined());
  opt.zero_grad();
  for (const Tensor& p : ps) EXPECT_FALSE(p.grad().defined());
  // A step with no gradients changes nothing.
  opt.step();
  for (size_t i = 0; i < ps.size(); ++i) EXPECT_EQ(dv(ps[i]), pb.init[i]);
}

// ---- the lazy device

// True when the tensor's pending value is a plain device buffer (no ops left to run).
bool materialized(const Tensor& t) {
  std::string ir = lt::debug::ir_text({t});
  return ir.find("device_data") != std::string::npos && ir.find("(%") == std::string::npos;
}

TEST_F(Optim, LazyStepEndsWithMarkStep) {
  for (int kind = 0; kind < 3; ++kind) {
    SCOPED_TRACE("optimizer " + std::to_string(kind));
    Problem pb;
    std::vector<Tensor> ps = make_params(pb, kLazy);
    std::unique_ptr<lt::optim::Optimizer> opt;
    if (kind == 0)
      opt = std::make_unique<lt::optim::SGD>(ps, lt::optim::SGDOptions(0.1).momentum(0.9));
    if (kind == 1) opt = std::make_unique<lt::optim::Adam>(ps, lt::optim::AdamOptions(0.1));
    if (kind == 2) opt = std::make_unique<lt::optim::AdamW>(ps, lt::optim::AdamWOptions(0.1));
    for (int step = 1; step <= 3; ++step) {
      opt->zero_grad();
      backward(pb, ps, step);
      EXPECT_FALSE(materialized(ps[0].grad()));  // the backward is still pending
      const int64_t marks = lt::metrics::counter("MarkStep");
      opt->step();
      EXPECT_EQ(lt::metrics::counter("MarkStep"), marks + 1);
      for (const Tensor& p : ps) {
        EXPECT_TRUE(materialized(p)) << lt::debug::ir_text({p});
        EXPECT_TRUE(p.device().is_lazy());
        EXPECT_TRUE(p.requires_grad() && p.is_leaf());
      }
      // Everything live (optimizer state included) was computed: a barrier finds no work.
      const int64_t compiles =
          lt::metrics::counter("UncachedCompile") + lt::metrics::counter("CachedCompile");
      lt::mark_step();
      EXPECT_EQ(lt::metrics::counter("UncachedCompile") + lt::metrics::counter("CachedCompile"),
                compiles);
    }
  }
  // On cpu, step() is no barrier.
  Problem pb;
  std::vector<Tensor> ps = make_params(pb, kCpu);
  lt::optim::Adam opt(ps, lt::optim::AdamOptions(0.1));
  backward(pb, ps, 1);
  const int64_t marks = lt::metrics::counter("MarkStep");
  opt.step();
  EXPECT_EQ(lt::metrics::counter("MarkStep"), marks);
}

TEST_F(Optim, SchedulerValues) {
  Problem pb;
  std::vector<Tensor> ps = make_params(pb, kCpu);
  lt::optim::SGD sgd(ps, lt::optim::SGDOptions(0.1));
  lt::optim::StepLR step_lr(sgd, 3, 0.5);
  EXPECT_DOUBLE_EQ(sgd.lr(), 0.1);
  for (int e = 1; e <= 10; ++e) {
    step_lr.step();
    EXPECT_NEAR(sgd.lr(), 0.1 * std::pow(0.5, e / 3), 1e-15) << "epoch " << e;
  }
  lt::optim::Adam adam(ps, lt::optim::AdamOptions(0.2));
  const int t_max = 8;
  const double eta_min = 0.01;
  lt::optim::CosineAnnealingLR cos_lr(adam, t_max, eta_min);
  EXPECT_DOUBLE_EQ(adam.lr(), 0.2);
  // PyTorch's closed form, which its recursive form follows past T_max too (the schedule is a
  // cosine of period 2 T_max: it comes back up after reaching eta_min).
  for (int e = 1; e <= 2 * t_max + 3; ++e) {
    cos_lr.step();
    EXPECT_NEAR(adam.lr(), eta_min + (0.2 - eta_min) * (1 + std::cos(M_PI * e / t_max)) / 2, 1e-12)
        << "epoch " << e;
  }
}

// Runs `steps` training steps of a small float32 problem on lazy with a scheduler stepping the
// learning rate every step; returns UncachedCompile after each step.
std::vector<int64_t> compiles_per_step(
    const std::function<std::unique_ptr<lt::optim::Optimizer>(std::vector<Tensor>)>& make,
    const std::function<void(lt::optim::Optimizer&)>& schedule_step, int steps) {
  lt::metrics::reset();
  lt::manual_seed(5);
  std::vector<Tensor> ps = {lt::randn({6, 5}).to(kLazy).requires_grad_(),
                            lt::randn({5}).to(kLazy).requires_grad_()};
  std::unique_ptr<lt::optim::Optimizer> opt = make(ps);
  std::vector<int64_t> out;
  std::vector<double> lrs;
  for (int s = 0; s < steps; ++s) {
    Tensor x = lt::randn({4, 6}).to(kLazy);
    opt->zero_grad();
    ((lt::matmul(x, ps[0]) + ps[1]).tanh().sum()).backward();
    opt->step();
    schedule_step(*opt);
    lrs.push_back(opt->lr());
    out.push_back(lt::metrics::counter("UncachedCompile"));
  }
  for (size_t i = 1; i < lrs.size(); ++i) EXPECT_NE(lrs[i], lrs[i - 1]) << "lr should change";
  return out;
}

TEST_F(Optim, ChangingLearningRateDoesNotRecompile) {
  const int steps = 10;
  // StepLR(1, 0.7) and cosine annealing change the rate every step (never to exactly 0 or 1,
  // which the lazy device records as constants).
  std::unique_ptr<lt::optim::StepLR> sched_step;
  std::unique_ptr<lt::optim::CosineAnnealingLR> sched_cos;
  auto by_step = [&](lt::optim::Optimizer& o) {
    if (!sched_step) sched_step = std::make_unique<lt::optim::StepLR>(o, 1, 0.7);
    sched_step->step();
  };
  auto by_cos = [&](lt::optim::Optimizer& o) {
    if (!sched_cos) sched_cos = std::make_unique<lt::optim::CosineAnnealingLR>(o, 50, 1e-4);
    sched_cos->step();
  };
  struct Case {
    std::string what;
    std::function<std::unique_ptr<lt::optim::Optimizer>(std::vector<Tensor>)> make;
    int64_t warmup_compiles;  // graphs before the steady state
  };
  const std::vector<Case> cases = {
      {"SGD",
       [](auto ps) { return std::make_unique<lt::optim::SGD>(ps, lt::optim::SGDOptions(0.1)); }, 1},
      // The first step initializes the momentum buffer (buf = d): a different graph.
      {"SGD momentum",
       [](auto ps) {
         return std::make_unique<lt::optim::SGD>(
             ps, lt::optim::SGDOptions(0.1).momentum(0.9).nesterov(true));
       },
       2},
      // Adam's zero state is device data from the start: its first step is the steady graph.
      {"Adam",
       [](auto ps) { return std::make_unique<lt::optim::Adam>(ps, lt::optim::AdamOptions(0.1)); },
       1},
      // Not weight_decay 0.01 with lr 0.1: the first step's decay factor 1 - lr * wd would be
      // exactly beta2 = 0.999, and the lazy graph builder gives equal scalar values one shared
      // parameter slot (src/ir/graph.cpp), so that coincidence alone makes a different graph.
      {"AdamW",
       [](auto ps) {
         lt::optim::AdamWOptions o(0.1);
         o.weight_decay(0.02);
         return std::make_unique<lt::optim::AdamW>(ps, o);
       },
       1},
  };
  for (const Case& c : cases) {
    for (int which = 0; which < 2; ++which) {
      SCOPED_TRACE(c.what + (which ? " + CosineAnnealingLR" : " + StepLR"));
      sched_step.reset();
      sched_cos.reset();
      std::vector<int64_t> n =
          compiles_per_step(c.make,
                            which ? std::function<void(lt::optim::Optimizer&)>(by_cos)
                                  : std::function<void(lt::optim::Optimizer&)>(by_step),
                            steps);
      std::string seq;
      for (int64_t v : n) seq += std::to_string(v) + " ";
      // At most the warm-up graphs (fewer when the process-wide cache has them already: the
      // second schedule records the very graphs of the first), none after the warm-up steps.
      EXPECT_LE(n.back(), c.warmup_compiles) << "UncachedCompile per step: " << seq;
      EXPECT_EQ(n.back(), n[c.warmup_compiles - 1])
          << "recompiled after warm-up; UncachedCompile per step: " << seq;
      EXPECT_GE(lt::metrics::counter("CachedCompile"), steps - c.warmup_compiles);
    }
  }
}

// ---- validation

TEST_F(Optim, InvalidOptionsThrow) {
  Problem pb;
  std::vector<Tensor> ps = make_params(pb, kCpu);
  using lt::optim::AdamOptions;
  using lt::optim::SGDOptions;
  EXPECT_THROW(lt::optim::SGD(ps, SGDOptions(-0.1)), lt::Error);
  EXPECT_THROW(lt::optim::SGD(ps, SGDOptions(NAN)), lt::Error);
  EXPECT_THROW(lt::optim::SGD(ps, SGDOptions(0.1).momentum(-0.5)), lt::Error);
  EXPECT_THROW(lt::optim::SGD(ps, SGDOptions(0.1).weight_decay(-1)), lt::Error);
  EXPECT_THROW(lt::optim::SGD(ps, SGDOptions(0.1).nesterov(true)), lt::Error);
  EXPECT_THROW(lt::optim::SGD(ps, SGDOptions(0.1).momentum(0.9).dampening(0.1).nesterov(true)),
               lt::Error);
  EXPECT_THROW(lt::optim::Adam(ps, AdamOptions(-1e-3)), lt::Error);
  EXPECT_THROW(lt::optim::Adam(ps, AdamOptions().betas({1.0, 0.999})), lt::Error);
  EXPECT_THROW(lt::optim::Adam(ps, AdamOptions().betas({0.9, 1.0})), lt::Error);
  EXPECT_THROW(lt::optim::Adam(ps, AdamOptions().betas({-0.1, 0.999})), lt::Error);
  EXPECT_THROW(lt::optim::Adam(ps, AdamOptions().eps(-1e-8)), lt::Error);
  EXPECT_THROW(lt::optim::Adam(ps, AdamOptions().weight_decay(-0.1)), lt::Error);
  lt::optim::AdamWOptions aw;
  aw.weight_decay(-0.01);
  EXPECT_THROW(lt::optim::AdamW(ps, aw), lt::Error);
  // Parameters must be defined leaves that require grad.
  EXPECT_THROW(lt::optim::SGD({lt::zeros({2})}, SGDOptions(0.1)), lt::Error);
  EXPECT_THROW(lt::optim::SGD({Tensor()}, SGDOptions(0.1)), lt::Error);
  EXPECT_THROW(lt::optim::Adam({ps[0] * 2.0}, AdamOptions()), lt::Error);
  // Schedulers.
  lt::optim::SGD sgd(ps, SGDOptions(0.1));
  EXPECT_THROW(lt::optim::StepLR(sgd, 0), lt::Error);
  EXPECT_THROW(lt::optim::StepLR(sgd, -2), lt::Error);
  EXPECT_THROW(lt::optim::CosineAnnealingLR(sgd, 0), lt::Error);
  // Valid edge values are accepted.
  EXPECT_NO_THROW(lt::optim::SGD(ps, SGDOptions(0.0)));
  EXPECT_NO_THROW(lt::optim::Adam(ps, AdamOptions().betas({0.0, 0.0}).eps(0)));
  // An empty parameter list is a mistake (PyTorch refuses it too), for every optimizer.
  for (auto make : {+[] { lt::optim::SGD o(std::vector<lt::Tensor>{}, SGDOptions(0.1)); },
                    +[] { lt::optim::Adam o(std::vector<lt::Tensor>{}, AdamOptions()); }}) {
    try {
      make();
      ADD_FAILURE() << "an empty parameter list was accepted";
    } catch (const lt::Error& e) {
      EXPECT_NE(std::string(e.what()).find("empty parameter list"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
