// Attention and transformers, as libtorch's: MultiheadAttention, TransformerEncoderLayer,
// TransformerDecoderLayer, TransformerEncoder, TransformerDecoder and Transformer, with
// libtorch's options and parameter names. Written over lt ops, so a lazy graph fuses them.
#pragma once
#include <cstdint>
#include <string>
#include <tuple>

#include "lt/nn/module.h"
#include "lt/nn/modules/container.h"
#include "lt/nn/modules/layers.h"
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

class TransformerDecoderLayerImpl : public Module {
 public:
  explicit TransformerDecoderLayerImpl(const TransformerDecoderLayerOptions& o);
  TransformerDecoderLayerImpl(int64_t d_model, int64_t nhead)
      : TransformerDecoderLayerImpl(TransformerDecoderLayerOptions(d_model, nhead)) {}
  // tgt [T, N, E] ([N, T, E] with batch_first), memory [S, N, E]; the masks as
  // MultiheadAttention's: tgt_mask [T, T] and memory_mask [T, S] additive or bool (true = may
  // not attend), the key padding masks bool [N, T] and [N, S].
  Tensor forward(const Tensor& tgt, const Tensor& memory, const Tensor& tgt_mask = {},
                 const Tensor& memory_mask = {}, const Tensor& tgt_key_padding_mask = {},
                 const Tensor& memory_key_padding_mask = {});
  std::string name() const override { return "TransformerDecoderLayer"; }
  LT_CLONE_FROM_OPTIONS(TransformerDecoderLayerImpl)
  TransformerDecoderLayerOptions options;
  MultiheadAttention self_attn;
  LayerNorm norm1;
  MultiheadAttention multihead_attn;
  LayerNorm norm2;
  Linear linear1, linear2;
  LayerNorm norm3;
};
LT_MODULE(TransformerDecoderLayer);

// A stack of num_layers copies of one layer (each a clone: they start equal, as libtorch's and
// PyTorch's), then `norm` if one is given.
struct TransformerEncoderOptions {
  TransformerEncoderOptions(TransformerEncoderLayer encoder_layer, int64_t num_layers)
      : encoder_layer_(std::move(encoder_layer)), num_layers_(num_layers) {}
  TransformerEncoderOptions(const TransformerEncoderLayerOptions& layer, int64_t num_layers)
      : TransformerEncoderOptions(TransformerEncoderLayer(layer), num_layers) {}
  LT_ARG(TransformerEncoderLayer, encoder_layer);
  LT_ARG(int64_t, num_layers);
  LT_ARG(AnyModule, norm);
};
struct TransformerDecoderOptions {
  TransformerDecoderOptions(TransformerDecoderLayer decoder_layer, int64_t num_layers)
      : decoder_layer_(std::move(decoder_layer)), num_layers_(num_layers) {}
  TransformerDecoderOptions(const TransformerDecoderLayerOptions& layer, int64_t num_layers)
      : TransformerDecoderOptions(TransformerDecoderLayer(layer), num_layers) {}
  LT_ARG(TransformerDecoderLayer, decoder_layer);
  LT_ARG(int64_t, num_layers);
  LT_ARG(AnyModule, norm);
};

class TransformerEncoderImpl : public Module {
 public:
  explicit TransformerEncoderImpl(TransformerEncoderOptions o);
  TransformerEncoderImpl(TransformerEncoderLayer layer, int64_t num_layers)
      : TransformerEncoderImpl(TransformerEncoderOptions(std::move(layer), num_layers)) {}
  Tensor forward(const Tensor& src, const Tensor& src_mask = {},
                 const Tensor& src_key_padding_mask = {});
  std::string name() const override { return "TransformerEncoder"; }
  LT_CLONE_FROM_OPTIONS(TransformerEncoderImpl)
  TransformerEncoderOptions options;
  ModuleList layers;
  AnyModule norm;
};
LT_MODULE(TransformerEncoder);

class TransformerDecoderImpl : public Module {
 public:
  explicit TransformerDecoderImpl(TransformerDecoderOptions o);
  TransformerDecoderImpl(TransformerDecoderLayer layer, int64_t num_layers)
      : TransformerDecoderImpl(TransformerDecoderOptions(std::move(layer), num_layers)) {}
  Tensor forward(const Tensor& tgt, const Tensor& memory, const Tensor& tgt_mask = {},
                 const Tensor& memory_mask = {}, const Tensor& tgt_key_padding_mask = {},
                 const Tensor& memory_key_padding_mask = {});
  std::string name() const override { return "TransformerDecoder"; }
  LT_CLONE_FROM_OPTIONS(TransformerDecoderImpl)
  TransformerDecoderOptions options;
  ModuleList layers;
  AnyModule norm;
};
LT_MODULE(TransformerDecoder);

// The whole encoder-decoder: libtorch's TransformerOptions, and Python's layer_norm_eps,
// norm_first and batch_first. Without a custom encoder or decoder, both are stacks of layers
// with a final LayerNorm, and every parameter of more than one dim is drawn xavier-uniform.
struct TransformerOptions {
  TransformerOptions(int64_t d_model = 512, int64_t nhead = 8) : d_model_(d_model), nhead_(nhead) {}
  TransformerOptions(int64_t d_model, int64_t nhead, int64_t num_encoder_layers,
                     int64_t num_decoder_layers)
      : d_model_(d_model),
        nhead_(nhead),
        num_encoder_layers_(num_encoder_layers),
        num_decoder_layers_(num_decoder_layers) {}
  LT_ARG(int64_t, d_model);
  LT_ARG(int64_t, nhead);
  LT_ARG(int64_t, num_encoder_layers) = 6;
  LT_ARG(int64_t, num_decoder_layers) = 6;
  LT_ARG(int64_t, dim_feedforward) = 2048;
  LT_ARG(double, dropout) = 0.1;
  LT_ARG(TransformerActivation, activation) = enumtype::kReLU();
  LT_ARG(AnyModule, custom_encoder);
  LT_ARG(AnyModule, custom_decoder);
  LT_ARG(double, layer_norm_eps) = 1e-5;
  LT_ARG(bool, norm_first) = false;
  LT_ARG(bool, batch_first) = false;
};

class TransformerImpl : public Module {
 public:
  explicit TransformerImpl(TransformerOptions o = {});
  // src [S, N, E], tgt [T, N, E] ([N, S, E], [N, T, E] with batch_first); the masks as
  // TransformerDecoderLayer's, src_mask [S, S].
  Tensor forward(const Tensor& src, const Tensor& tgt, const Tensor& src_mask = {},
                 const Tensor& tgt_mask = {}, const Tensor& memory_mask = {},
                 const Tensor& src_key_padding_mask = {}, const Tensor& tgt_key_padding_mask = {},
                 const Tensor& memory_key_padding_mask = {});
  // [sz, sz] float32 on the CPU: -inf above the diagonal (later positions), 0 elsewhere.
  static Tensor generate_square_subsequent_mask(int64_t sz);
  std::string name() const override { return "Transformer"; }
  LT_CLONE_FROM_OPTIONS(TransformerImpl)
  TransformerOptions options;
  AnyModule encoder, decoder;
};
LT_MODULE(Transformer);

}  // namespace lt::nn
