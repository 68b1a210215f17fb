#include "lt/nn/parallel.h"

#include "lt/autograd.h"
#include "lt/dist.h"
#include "lt/ops.h"

namespace lt::nn::parallel {

DistributedDataParallelImpl::DistributedDataParallelImpl(
    std::shared_ptr<Module> module, std::function<Tensor(const Tensor&)> forward,
    DistributedDataParallelOptions options)
    : module_(std::move(module)), forward_(std::move(forward)), options_(options) {
  if (!dist::is_initialized())
    throw Error(
        "DistributedDataParallel: the process group is not initialized (call "
        "lt::dist::init_process_group first)");
  register_module("module", module_);
  broadcast_state();
}

void DistributedDataParallelImpl::broadcast_state() {
  if (dist::world_size() == 1) return;
  NoGradGuard no_grad;  // parameters are leaves that require grad: write them untracked
  for (Tensor t : parameters()) dist::broadcast(t, options_.broadcast_src);
  for (Tensor t : buffers()) dist::broadcast(t, options_.broadcast_src);
}

void DistributedDataParallelImpl::synchronize_gradients() {
  if (dist::world_size() == 1) return;
  NoGradGuard no_grad;
  std::vector<Tensor> params = parameters();
  const double cap = options_.bucket_cap_mb * 1024 * 1024;
  std::vector<Tensor> bucket;
  double bytes = 0;
  auto flush = [&] {
    if (!bucket.empty()) dist::all_reduce_coalesced(bucket, dist::ReduceOp::Mean);
    bucket.clear();
    bytes = 0;
  };
  for (auto it = params.rbegin(); it != params.rend(); ++it) {
    Tensor& p = *it;
    if (!p.requires_grad()) continue;
    if (!p.grad().defined()) p.mutable_grad() = zeros_like(p);
    Tensor g = p.grad();
    const double b = static_cast<double>(g.numel()) * static_cast<double>(g.element_size());
    if (!bucket.empty() && (bucket[0].dtype() != g.dtype() || bytes + b > cap)) flush();
    bucket.push_back(g);
    bytes += b;
  }
  flush();
}

}  // namespace lt::nn::parallel
