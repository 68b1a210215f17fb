// The lt::nn modules. Initialization follows PyTorch's defaults.
#pragma once
#include <string>
#include <tuple>
#include <vector>

#include "lt/nn/module.h"
#include "lt/nn/modules/activation.h"
#include "lt/nn/modules/container.h"
#include "lt/nn/modules/layers.h"
#include "lt/nn/modules/loss.h"
#include "lt/nn/modules/rnn.h"
#include "lt/nn/options.h"
#include "lt/ops.h"

namespace lt::nn {

class MultiheadAttentionImpl : public Module {
 public:
  explicit MultiheadAttentionImpl(const MultiheadAttentionOptions& o);
  MultiheadAttentionImpl(int64_t embed_dim, int64_t num_heads)
      : MultiheadAttentionImpl(MultiheadAttentionOptions(embed_dim, num_heads)) {}
  // Returns (output, attention weights averaged over heads). As PyTorch's: attn_mask [L, S] is
  // additive (float) or bool with true = may NOT attend; key_padding_mask bool [N, S], true =
  // ignore that key.
  std::tuple<Tensor, Tensor> forward(const Tensor& query, const Tensor& key, const Tensor& value,
                                     const Tensor& key_padding_mask = {},
                                     const Tensor& attn_mask = {});
  std::string name() const override { return "MultiheadAttention"; }
  LT_CLONE_FROM_OPTIONS(MultiheadAttentionImpl)
  MultiheadAttentionOptions options;
  Tensor in_proj_weight, in_proj_bias;
  Linear out_proj;
};
LT_MODULE(MultiheadAttention);

class TransformerEncoderLayerImpl : public Module {
 public:
  explicit TransformerEncoderLayerImpl(const TransformerEncoderLayerOptions& o);
  TransformerEncoderLayerImpl(int64_t d_model, int64_t nhead)
      : TransformerEncoderLayerImpl(TransformerEncoderLayerOptions(d_model, nhead)) {}
  Tensor forward(const Tensor& src, const Tensor& src_mask = {},
                 const Tensor& src_key_padding_mask = {});
  std::string name() const override { return "TransformerEncoderLayer"; }
  LT_CLONE_FROM_OPTIONS(TransformerEncoderLayerImpl)
  TransformerEncoderLayerOptions options;
  MultiheadAttention self_attn;
  Linear linear1, linear2;
  LayerNorm norm1, norm2;
};
LT_MODULE(TransformerEncoderLayer);

}  // namespace lt::nn
