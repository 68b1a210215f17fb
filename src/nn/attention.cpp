// MultiheadAttention and the transformer layers, written over lt ops (so lazy graphs fuse them).
#include <cmath>
#include <limits>

#include "core/check.h"
#include "core/shape.h"
#include "lt/autograd.h"
#include "lt/nn/modules.h"

namespace lt::nn {

MultiheadAttentionImpl::MultiheadAttentionImpl(const MultiheadAttentionOptions& o)
    : options(o), out_proj(o.embed_dim(), o.embed_dim(), o.bias()) {
  LT_CHECK(o.embed_dim() > 0 && o.num_heads() > 0 && o.embed_dim() % o.num_heads() == 0,
           "MultiheadAttention: embed_dim ", o.embed_dim(), " must be divisible by num_heads ",
           o.num_heads());
  const double bound = std::sqrt(6.0 / static_cast<double>(o.embed_dim() + 3 * o.embed_dim()));
  in_proj_weight = register_parameter(
      "in_proj_weight", (rand({3 * o.embed_dim(), o.embed_dim()}) * 2.0 - 1.0) * bound);
  if (o.bias()) {
    in_proj_bias = register_parameter("in_proj_bias", zeros({3 * o.embed_dim()}));
    NoGradGuard g;
    out_proj->bias.zero_();
  }
  register_module("out_proj", out_proj.ptr());
}

std::tuple<Tensor, Tensor> MultiheadAttentionImpl::forward(const Tensor& query, const Tensor& key,
                                                           const Tensor& value,
                                                           const Tensor& key_padding_mask,
                                                           const Tensor& attn_mask) {
  const int64_t E = options.embed_dim(), H = options.num_heads(), D = E / H;
  LT_CHECK(query.dim() == 3 && key.dim() == 3 && value.dim() == 3 && query.size(-1) == E &&
               key.size(-1) == E && value.size(-1) == E,
           "MultiheadAttention: expected 3-d query/key/value with ", E, " features, got ",
           shape_str(query.sizes()), ", ", shape_str(key.sizes()), ", ", shape_str(value.sizes()));
  auto batch_major = [&](const Tensor& t) { return options.batch_first() ? t : t.transpose(0, 1); };
  Tensor q = batch_major(query), k = batch_major(key), v = batch_major(value);  // [N, L, E]
  const int64_t N = q.size(0), L = q.size(1), S = k.size(1);
  std::vector<Tensor> w = in_proj_weight.chunk(3, 0);
  std::vector<Tensor> b = in_proj_bias.defined() ? in_proj_bias.chunk(3, 0)
                                                 : std::vector<Tensor>(3);
  auto heads = [&](const Tensor& x, int i, int64_t len) {
    return linear(x, w[i], b[i]).reshape({N, len, H, D}).transpose(1, 2);  // [N, H, len, D]
  };
  Tensor Q = heads(q, 0, L), K = heads(k, 1, S), V = heads(v, 2, S);
  Tensor scores = matmul(Q, K.transpose(-2, -1)) * (1.0 / std::sqrt(static_cast<double>(D)));
  const double ninf = -std::numeric_limits<double>::infinity();
  if (attn_mask.defined())
    scores = attn_mask.dtype() == kBool ? where(attn_mask, ninf, scores) : scores + attn_mask;
  if (key_padding_mask.defined()) {
    LT_CHECK(key_padding_mask.dim() == 2 && key_padding_mask.size(0) == N &&
                 key_padding_mask.size(1) == S,
             "MultiheadAttention: key_padding_mask must be [", N, ", ", S, "], got ",
             shape_str(key_padding_mask.sizes()));
    scores = where(key_padding_mask.reshape({N, 1, 1, S}), ninf, scores);
  }
  Tensor p = softmax(scores, -1);
  Tensor pd = dropout(p, options.dropout(), is_training());
  Tensor out = matmul(pd, V).transpose(1, 2).reshape({N, L, E});
  out = out_proj->forward(out);
  if (!options.batch_first()) out = out.transpose(0, 1);
  return {out, p.mean(1)};
}

Tensor TransformerActivation::operator()(const Tensor& x) const {
  if (fn_) return fn_(x);
  if (name_ == "gelu") return gelu(x);
  LT_CHECK(name_ == "relu",
           "transformer activation must be torch::kReLU, torch::kGELU or a "
           "function, got \"",
           name_, "\"");
  return relu(x);
}

namespace {
template <typename Options>
void check_layer(const char* layer, const Options& o) {
  LT_CHECK(o.activation().valid(), layer,
           ": activation must be torch::kReLU, torch::kGELU (\"relu\", \"gelu\") or a function, "
           "got \"",
           o.activation().name(), "\"");
  LT_CHECK(o.dim_feedforward() > 0, layer, ": dim_feedforward must be positive, got ",
           o.dim_feedforward());
  LT_CHECK(o.dropout() >= 0 && o.dropout() <= 1, layer, ": dropout must be in [0, 1], got ",
           o.dropout());
}

template <typename Options>
MultiheadAttentionOptions attention_of(const Options& o) {
  return MultiheadAttentionOptions(o.d_model(), o.nhead())
      .dropout(o.dropout())
      .batch_first(o.batch_first());
}

template <typename Options>
LayerNormOptions norm_of(const Options& o) {
  return LayerNormOptions({o.d_model()}).eps(o.layer_norm_eps());
}
}  // namespace

TransformerEncoderLayerImpl::TransformerEncoderLayerImpl(const TransformerEncoderLayerOptions& o)
    : options(o),
      self_attn(attention_of(o)),
      linear1(o.d_model(), o.dim_feedforward()),
      linear2(o.dim_feedforward(), o.d_model()),
      norm1(norm_of(o)),
      norm2(norm_of(o)) {
  check_layer("TransformerEncoderLayer", o);
  register_module("self_attn", self_attn.ptr());
  register_module("linear1", linear1.ptr());
  register_module("linear2", linear2.ptr());
  register_module("norm1", norm1.ptr());
  register_module("norm2", norm2.ptr());
}

namespace {
// The feed-forward block: linear2(dropout(activation(linear1(x)))), then dropout.
Tensor feed_forward(const Linear& linear1, const Linear& linear2, const TransformerActivation& f,
                    const Tensor& x, double p, bool train) {
  return dropout(linear2->forward(dropout(f(linear1->forward(x)), p, train)), p, train);
}
}  // namespace

Tensor TransformerEncoderLayerImpl::forward(const Tensor& src, const Tensor& src_mask,
                                            const Tensor& src_key_padding_mask) {
  const double p = options.dropout();
  const bool train = is_training();
  auto sa = [&](const Tensor& x) {
    return dropout(std::get<0>(self_attn->forward(x, x, x, src_key_padding_mask, src_mask)), p,
                   train);
  };
  auto ff = [&](const Tensor& x) {
    return feed_forward(linear1, linear2, options.activation(), x, p, train);
  };
  Tensor x = src;
  if (options.norm_first()) {
    x = x + sa(norm1->forward(x));
    x = x + ff(norm2->forward(x));
  } else {
    x = norm1->forward(x + sa(x));
    x = norm2->forward(x + ff(x));
  }
  return x;
}

TransformerDecoderLayerImpl::TransformerDecoderLayerImpl(const TransformerDecoderLayerOptions& o)
    : options(o),
      self_attn(attention_of(o)),
      norm1(norm_of(o)),
      multihead_attn(attention_of(o)),
      norm2(norm_of(o)),
      linear1(o.d_model(), o.dim_feedforward()),
      linear2(o.dim_feedforward(), o.d_model()),
      norm3(norm_of(o)) {
  check_layer("TransformerDecoderLayer", o);
  // libtorch's registration order (Python's differs; the names are the same).
  register_module("self_attn", self_attn.ptr());
  register_module("norm1", norm1.ptr());
  register_module("multihead_attn", multihead_attn.ptr());
  register_module("norm2", norm2.ptr());
  register_module("linear1", linear1.ptr());
  register_module("linear2", linear2.ptr());
  register_module("norm3", norm3.ptr());
}

Tensor TransformerDecoderLayerImpl::forward(const Tensor& tgt, const Tensor& memory,
                                            const Tensor& tgt_mask, const Tensor& memory_mask,
                                            const Tensor& tgt_key_padding_mask,
                                            const Tensor& memory_key_padding_mask) {
  const double p = options.dropout();
  const bool train = is_training();
  auto sa = [&](const Tensor& x) {
    return dropout(std::get<0>(self_attn->forward(x, x, x, tgt_key_padding_mask, tgt_mask)), p,
                   train);
  };
  auto mha = [&](const Tensor& x) {
    return dropout(std::get<0>(multihead_attn->forward(x, memory, memory, memory_key_padding_mask,
                                                       memory_mask)),
                   p, train);
  };
  auto ff = [&](const Tensor& x) {
    return feed_forward(linear1, linear2, options.activation(), x, p, train);
  };
  Tensor x = tgt;
  if (options.norm_first()) {
    x = x + sa(norm1->forward(x));
    x = x + mha(norm2->forward(x));
    x = x + ff(norm3->forward(x));
  } else {
    x = norm1->forward(x + sa(x));
    x = norm2->forward(x + mha(x));
    x = norm3->forward(x + ff(x));
  }
  return x;
}

}  // namespace lt::nn
