// Linear, Conv2d, LayerNorm, BatchNorm1d/2d, Embedding, dropouts, Unflatten, and the
// out-of-line parts of ModuleList and ModuleDict.
#include <cmath>
#include <optional>

#include "core/check.h"
#include "core/shape.h"
#include "lt/autograd.h"
#include "lt/nn/modules.h"

namespace lt::nn {
namespace {
// U(-bound, bound): PyTorch's kaiming_uniform_(a = sqrt(5)) for weights and its bias init
// both come to bound = 1 / sqrt(fan_in).
Tensor uniform(IntList sizes, double bound) { return (rand(sizes) * 2.0 - 1.0) * bound; }
// New U(-bound, bound) values for a weight and its bias (if any), drawn in that order, keeping
// the parameters' identity (optimizers that hold them still see them) and device.
void reset_uniform(Tensor& weight, Tensor& bias, double bound) {
  NoGradGuard g;
  for (Tensor* p : {&weight, &bias})
    if (p->defined()) p->set_data(uniform(p->sizes(), bound).to(p->device()));
}
// An embedding table [num, dim] from N(0, 1) with the padding row (if any) zero, as libtorch's
// Embedding and EmbeddingBag.
Tensor embedding_table(const char* name, int64_t num, int64_t dim,
                       std::optional<int64_t> padding_idx) {
  LT_CHECK(num > 0 && dim > 0, name, ": sizes ", num, " x ", dim, " must be positive");
  Tensor w = randn({num, dim});
  if (padding_idx) {
    const int64_t p = *padding_idx < 0 ? *padding_idx + num : *padding_idx;
    LT_CHECK(p >= 0 && p < num, name, ": padding_idx ", *padding_idx, " is out of range for ", num,
             " embeddings");
    w.select(0, p).fill_(0);
  }
  return w;
}
}  // namespace

LinearImpl::LinearImpl(const LinearOptions& o) : options(o) {
  LT_CHECK(o.in_features() > 0 && o.out_features() > 0, "Linear: in_features ", o.in_features(),
           " and out_features ", o.out_features(), " must be positive");
  weight = register_parameter("weight", empty({o.out_features(), o.in_features()}));
  if (o.bias()) bias = register_parameter("bias", empty({o.out_features()}));
  reset_parameters();
}
void LinearImpl::reset_parameters() {
  reset_uniform(weight, bias, 1.0 / std::sqrt(static_cast<double>(options.in_features())));
}
Tensor LinearImpl::forward(const Tensor& x) { return linear(x, weight, bias); }
void LinearImpl::pretty_print(std::ostream& os) const {
  os << "Linear(in_features=" << options.in_features()
     << ", out_features=" << options.out_features()
     << ", bias=" << (options.bias() ? "true" : "false") << ")";
}

Conv1dImpl::Conv1dImpl(const Conv1dOptions& o) : options(o) {
  const int64_t k = o.kernel_size()[0];
  LT_CHECK(o.in_channels() > 0 && o.out_channels() > 0 && k > 0 && o.groups() > 0 &&
               o.in_channels() % o.groups() == 0 && o.out_channels() % o.groups() == 0,
           "Conv1d: channels ", o.in_channels(), " -> ", o.out_channels(), ", kernel ", k,
           ", groups ", o.groups(), " are not a valid configuration");
  LT_CHECK(!o.padding().is_same() || o.stride()[0] == 1,
           "Conv1d: padding kSame needs stride 1, got stride ", o.stride()[0]);
  weight = register_parameter("weight", empty({o.out_channels(), o.in_channels() / o.groups(), k}));
  if (o.bias()) bias = register_parameter("bias", empty({o.out_channels()}));
  reset_parameters();
}
void Conv1dImpl::reset_parameters() {
  const int64_t fan_in = weight.numel() / weight.size(0);  // in_channels / groups * k
  reset_uniform(weight, bias, 1.0 / std::sqrt(static_cast<double>(fan_in)));
}
// F::pad's list (last dim first, before then after) for a padding mode other than zeros: the
// explicit sizes on both sides, or "same"'s split (conv_named_padding in src/api).
template <size_t D>
std::vector<int64_t> mode_pads(const ConvPadding<D>& p, const ExpandingArray<D>& kernel,
                               const ExpandingArray<D>& dilation) {
  std::vector<int64_t> r;
  for (size_t i = D; i-- > 0;) {
    const int64_t total = p.is_same() ? dilation[i] * (kernel[i] - 1) : 2 * p[i];
    r.insert(r.end(), {total / 2, total - total / 2});
  }
  return r;
}
Tensor Conv1dImpl::forward(const Tensor& x) {
  const auto& o = options;
  if (o.padding_mode() == PadMode::Constant && o.padding().is_same())
    return conv1d(x, weight, bias, o.stride(), "same", o.dilation(), o.groups());
  if (o.padding_mode() == PadMode::Constant)
    return conv1d(x, weight, bias, o.stride(), o.padding().sizes(), o.dilation(), o.groups());
  Tensor p = pad(x, mode_pads<1>(o.padding(), o.kernel_size(), o.dilation()), o.padding_mode());
  return conv1d(p, weight, bias, o.stride(), {0}, o.dilation(), o.groups());
}

Conv2dImpl::Conv2dImpl(const Conv2dOptions& o) : options(o) {
  const auto& k = o.kernel_size();
  LT_CHECK(o.in_channels() > 0 && o.out_channels() > 0 && k[0] > 0 && k[1] > 0 && o.groups() > 0 &&
               o.in_channels() % o.groups() == 0 && o.out_channels() % o.groups() == 0,
           "Conv2d: channels ", o.in_channels(), " -> ", o.out_channels(), ", kernel ",
           shape_str(k), ", groups ", o.groups(), " are not a valid configuration");
  LT_CHECK(!o.padding().is_same() || (o.stride()[0] == 1 && o.stride()[1] == 1),
           "Conv2d: padding kSame needs stride 1, got stride ", shape_str(o.stride()));
  weight = register_parameter("weight",
                              empty({o.out_channels(), o.in_channels() / o.groups(), k[0], k[1]}));
  if (o.bias()) bias = register_parameter("bias", empty({o.out_channels()}));
  reset_parameters();
}
void Conv2dImpl::reset_parameters() {
  const int64_t fan_in = weight.numel() / weight.size(0);  // in_channels / groups * kh * kw
  reset_uniform(weight, bias, 1.0 / std::sqrt(static_cast<double>(fan_in)));
}
Tensor Conv2dImpl::forward(const Tensor& x) {
  const auto& o = options;
  if (o.padding_mode() == PadMode::Constant && o.padding().is_same())
    return conv2d(x, weight, bias, o.stride(), "same", o.dilation(), o.groups());
  if (o.padding_mode() == PadMode::Constant)
    return conv2d(x, weight, bias, o.stride(), o.padding().sizes(), o.dilation(), o.groups());
  // Other modes pad first (width pair, then height), then convolve without padding.
  Tensor p = pad(x, mode_pads<2>(o.padding(), o.kernel_size(), o.dilation()), o.padding_mode());
  return conv2d(p, weight, bias, o.stride(), {0, 0}, o.dilation(), o.groups());
}
void Conv2dImpl::pretty_print(std::ostream& os) const {
  const auto& o = options;
  os << "Conv2d(" << o.in_channels() << ", " << o.out_channels()
     << ", kernel_size=" << shape_str(o.kernel_size()) << ", stride=" << shape_str(o.stride())
     << ")";
}

LayerNormImpl::LayerNormImpl(const LayerNormOptions& o) : options(o) {
  if (o.elementwise_affine()) {
    weight = register_parameter("weight", ones(o.normalized_shape()));
    bias = register_parameter("bias", zeros(o.normalized_shape()));
  }
}
Tensor LayerNormImpl::forward(const Tensor& x) {
  return layer_norm(x, options.normalized_shape(), weight, bias, options.eps());
}

BatchNormImplBase::BatchNormImplBase(const BatchNormOptions& o, int64_t min_dim, int64_t max_dim,
                                     const char* kind)
    : options(o), min_dim_(min_dim), max_dim_(max_dim), kind_(kind) {
  const int64_t n = o.num_features();
  LT_CHECK(n > 0, kind, ": num_features must be positive, got ", n);
  if (o.affine()) {
    weight = register_parameter("weight", ones({n}));
    bias = register_parameter("bias", zeros({n}));
  }
  if (o.track_running_stats()) {
    running_mean = register_buffer("running_mean", zeros({n}));
    running_var = register_buffer("running_var", ones({n}));
    num_batches_tracked = register_buffer("num_batches_tracked", zeros({}, kInt64));
  }
}
void BatchNormImplBase::reset_running_stats() {
  if (!options.track_running_stats()) return;
  NoGradGuard g;
  running_mean.zero_();
  running_var.fill_(1);
  num_batches_tracked.zero_();
}
Tensor BatchNormImplBase::forward(const Tensor& x) {
  const int64_t c = options.num_features();
  LT_CHECK(x.dim() >= min_dim_ && x.dim() <= max_dim_ && x.size(1) == c, kind_,
           ": expected input [N, ", c, max_dim_ == 4 ? ", H, W]" : "] or [N, C, L]",
           " with C = ", c, ", got ", shape_str(x.sizes()));
  // Without tracked statistics (running_mean undefined) both modes use the batch's.
  const bool use_batch = is_training() || !options.track_running_stats();
  Tensor y = batch_norm(x, weight, bias, running_mean, running_var, use_batch, options.momentum(),
                        options.eps());
  if (is_training() && options.track_running_stats()) {
    NoGradGuard g;
    num_batches_tracked.add_(1);
  }
  return y;
}

EmbeddingImpl::EmbeddingImpl(const EmbeddingOptions& o) : options(o) {
  weight = register_parameter("weight", embedding_table("Embedding", o.num_embeddings(),
                                                        o.embedding_dim(), o.padding_idx()));
}
Tensor EmbeddingImpl::forward(const Tensor& indices) {
  const auto& o = options;
  return functional::embedding(indices, weight,
                               functional::EmbeddingFuncOptions()
                                   .padding_idx(o.padding_idx())
                                   .max_norm(o.max_norm())
                                   .norm_type(o.norm_type())
                                   .scale_grad_by_freq(o.scale_grad_by_freq())
                                   .sparse(o.sparse()));
}

EmbeddingBagImpl::EmbeddingBagImpl(const EmbeddingBagOptions& o) : options(o) {
  weight = register_parameter("weight", embedding_table("EmbeddingBag", o.num_embeddings(),
                                                        o.embedding_dim(), o.padding_idx()));
}
Tensor EmbeddingBagImpl::forward(const Tensor& input, const Tensor& offsets,
                                 const Tensor& per_sample_weights) {
  const auto& o = options;
  return functional::embedding_bag(input, weight,
                                   functional::EmbeddingBagFuncOptions()
                                       .offsets(offsets)
                                       .max_norm(o.max_norm())
                                       .norm_type(o.norm_type())
                                       .scale_grad_by_freq(o.scale_grad_by_freq())
                                       .mode(o.mode())
                                       .sparse(o.sparse())
                                       .per_sample_weights(per_sample_weights)
                                       .include_last_offset(o.include_last_offset())
                                       .padding_idx(o.padding_idx()));
}

Embedding Embedding::from_pretrained(const Tensor& embeddings,
                                     const EmbeddingFromPretrainedOptions& options) {
  LT_CHECK(embeddings.dim() == 2,
           "Embedding::from_pretrained: expected a 2-d [num, dim] tensor, got ",
           shape_str(embeddings.sizes()));
  Embedding e(embeddings.size(0), embeddings.size(1));
  NoGradGuard g;
  e->weight.set_data(embeddings.detach().clone());
  e->weight.requires_grad_(!options.freeze());
  return e;
}

EmbeddingBag EmbeddingBag::from_pretrained(const Tensor& embeddings,
                                           const EmbeddingBagFromPretrainedOptions& o) {
  LT_CHECK(embeddings.dim() == 2,
           "EmbeddingBag::from_pretrained: expected a 2-d [num, dim] tensor, got ",
           shape_str(embeddings.sizes()));
  EmbeddingBag e(EmbeddingBagOptions(embeddings.size(0), embeddings.size(1))
                     .max_norm(o.max_norm())
                     .norm_type(o.norm_type())
                     .scale_grad_by_freq(o.scale_grad_by_freq())
                     .mode(o.mode())
                     .sparse(o.sparse())
                     .include_last_offset(o.include_last_offset())
                     .padding_idx(o.padding_idx()));
  NoGradGuard g;
  e->weight.set_data(embeddings.detach().clone());
  e->weight.requires_grad_(!o.freeze());
  return e;
}

Tensor DropoutImpl::forward(const Tensor& x) {
  return functional::dropout(x, functional::DropoutFuncOptions()
                                    .p(options.p())
                                    .training(is_training())
                                    .inplace(options.inplace()));
}

Tensor Dropout2dImpl::forward(const Tensor& x) {
  return functional::dropout2d(x, functional::Dropout2dFuncOptions()
                                      .p(options.p())
                                      .training(is_training())
                                      .inplace(options.inplace()));
}

Tensor UnflattenImpl::forward(const Tensor& x) {
  const int64_t d = options.dim() < 0 ? options.dim() + x.dim() : options.dim();
  LT_CHECK(d >= 0 && d < x.dim(), "Unflatten: dim ", options.dim(), " out of range for shape ",
           shape_str(x.sizes()));
  std::vector<int64_t> s = x.sizes().vec();
  s.erase(s.begin() + d);
  s.insert(s.begin() + d, options.sizes().begin(), options.sizes().end());
  return x.reshape(s);
}

void ModuleListImpl::rebuild(const std::vector<std::shared_ptr<Module>>& all) {
  for (size_t i = 0; i < modules_.size(); ++i) unregister_module(std::to_string(i));
  modules_.clear();
  for (const auto& m : all) push_back(m);
}

std::shared_ptr<Module> ModuleDictImpl::pop(const std::string& key) {
  std::shared_ptr<Module> m = dict_.pop(key);
  unregister_module(key);
  return m;
}

void ModuleDictImpl::clear() {
  for (const auto& k : dict_.keys()) unregister_module(k);
  dict_.clear();
}

}  // namespace lt::nn
