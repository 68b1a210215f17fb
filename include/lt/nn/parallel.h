// lt::nn::parallel::DistributedDataParallel: data-parallel training over lt::dist's process
// group, in the shape of torch.nn.parallel.DistributedDataParallel.
//
//   lt::dist::init_process_group();            // RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT
//   lt::nn::parallel::DistributedDataParallel ddp(model);  // rank 0's parameters everywhere
//   auto loss = lt::nn::functional::cross_entropy(ddp(x_shard), y_shard);
//   loss.backward();
//   ddp->synchronize_gradients();              // every rank now holds the mean gradient
//   opt.step();                                // unchanged lt::optim
//
// Autograd has no post-backward hook, so the gradient all-reduce is this explicit call between
// backward() and the optimizer step (the optimizers need no change). Gradients are grouped in
// reverse registration order (roughly the order backward produces them) into buckets of at most
// bucket_cap_mb, one all_reduce(Mean) per bucket. On the lazy device the buckets' AllReduce ops
// are part of the step's graph and run at the optimizer's mark_step.
//
// With equal local batches and a per-rank mean loss, the mean of the ranks' gradients is the
// gradient of the global batch's mean loss, so N ranks follow the single-process trajectory.
#pragma once
#include <functional>
#include <memory>

#include "lt/nn/module.h"

namespace lt::nn::parallel {

struct DistributedDataParallelOptions {
  double bucket_cap_mb = 25;  // torch's default
  int broadcast_src = 0;      // whose parameters and buffers everyone starts from
};

class DistributedDataParallelImpl : public Module {
 public:
  // Wraps `module` (registered as the child "module", as in torch, so state dict names gain a
  // "module." prefix) and broadcasts its parameters and buffers from broadcast_src. Needs
  // lt::dist::init_process_group() first (a world of one is fine).
  template <typename Holder>
  explicit DistributedDataParallelImpl(const Holder& module,
                                       DistributedDataParallelOptions options = {})
      : DistributedDataParallelImpl(
            module.ptr(), [p = module.ptr()](const Tensor& x) { return p->forward(x); }, options) {}
  DistributedDataParallelImpl(std::shared_ptr<Module> module,
                              std::function<Tensor(const Tensor&)> forward,
                              DistributedDataParallelOptions options = {});

  Tensor forward(const Tensor& x) { return forward_(x); }
  // Averages every parameter's gradient over the ranks (bucketed all_reduce, Mean). A parameter
  // without a gradient gets zeros first, so every rank issues the same collectives. A no-op in
  // a world of one. Call after backward(), before the optimizer step.
  void synchronize_gradients();
  // Broadcasts parameters and buffers from broadcast_src again (done at construction).
  void broadcast_state();

  const std::shared_ptr<Module>& module() const { return module_; }
  std::string name() const override { return "DistributedDataParallel"; }

 private:
  std::shared_ptr<Module> module_;
  std::function<Tensor(const Tensor&)> forward_;
  DistributedDataParallelOptions options_;
};
LT_MODULE(DistributedDataParallel);

}  // namespace lt::nn::parallel
