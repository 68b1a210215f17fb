// TransformerEncoder, TransformerDecoder and Transformer: stacks of the layers in attention.cpp.
#include <limits>

#include "core/check.h"
#include "core/shape.h"
#include "lt/nn/init.h"
#include "lt/nn/modules.h"

namespace lt::nn {

namespace {
// num_layers clones of `layer` in a registered ModuleList, and a clone of `norm` if one is given.
template <typename Layer>
void build_stack(Module& self, const char* name, const Layer& layer, int64_t num_layers,
                 const AnyModule& norm_option, ModuleList* layers, AnyModule* norm) {
  LT_CHECK(num_layers >= 0, name, ": num_layers must be >= 0, got ", num_layers);
  LT_CHECK(!layer.is_empty(), name, ": the layer to stack is empty");
  *layers = ModuleList();
  for (int64_t i = 0; i < num_layers; ++i) (*layers)->push_back(layer->clone());
  self.register_module("layers", layers->ptr());
  if (!norm_option.is_empty()) {
    *norm = norm_option.clone();
    self.register_module("norm", norm->ptr());
  }
}
}  // namespace

TransformerEncoderImpl::TransformerEncoderImpl(TransformerEncoderOptions o)
    : options(std::move(o)) {
  build_stack(*this, "TransformerEncoder", options.encoder_layer(), options.num_layers(),
              options.norm(), &layers, &norm);
}

Tensor TransformerEncoderImpl::forward(const Tensor& src, const Tensor& src_mask,
                                       const Tensor& src_key_padding_mask) {
  Tensor x = src;
  for (size_t i = 0; i < layers->size(); ++i)
    x = layers->at<TransformerEncoderLayerImpl>(i).forward(x, src_mask, src_key_padding_mask);
  return norm.is_empty() ? x : norm.forward(x);
}

TransformerDecoderImpl::TransformerDecoderImpl(TransformerDecoderOptions o)
    : options(std::move(o)) {
  build_stack(*this, "TransformerDecoder", options.decoder_layer(), options.num_layers(),
              options.norm(), &layers, &norm);
}

Tensor TransformerDecoderImpl::forward(const Tensor& tgt, const Tensor& memory,
                                       const Tensor& tgt_mask, const Tensor& memory_mask,
                                       const Tensor& tgt_key_padding_mask,
                                       const Tensor& memory_key_padding_mask) {
  Tensor x = tgt;
  for (size_t i = 0; i < layers->size(); ++i)
    x = layers->at<TransformerDecoderLayerImpl>(i).forward(
        x, memory, tgt_mask, memory_mask, tgt_key_padding_mask, memory_key_padding_mask);
  return norm.is_empty() ? x : norm.forward(x);
}

namespace {
// The default encoder or decoder of a Transformer: num_layers layers from its options, then a
// LayerNorm.
template <typename LayerOptions, typename Stack, typename StackOptions>
AnyModule default_stack(const TransformerOptions& t, int64_t num_layers) {
  auto layer = LayerOptions(t.d_model(), t.nhead())
                   .dim_feedforward(t.dim_feedforward())
                   .dropout(t.dropout())
                   .activation(t.activation())
                   .layer_norm_eps(t.layer_norm_eps())
                   .norm_first(t.norm_first())
                   .batch_first(t.batch_first());
  return AnyModule(Stack(
      StackOptions(layer, num_layers)
          .norm(AnyModule(LayerNorm(LayerNormOptions({t.d_model()}).eps(t.layer_norm_eps()))))));
}
}  // namespace

TransformerImpl::TransformerImpl(TransformerOptions o) : options(std::move(o)) {
  const TransformerOptions& t = options;
  encoder = !t.custom_encoder().is_empty()
                ? t.custom_encoder().clone()
                : default_stack<TransformerEncoderLayerOptions, TransformerEncoder,
                                TransformerEncoderOptions>(t, t.num_encoder_layers());
  decoder = !t.custom_decoder().is_empty()
                ? t.custom_decoder().clone()
                : default_stack<TransformerDecoderLayerOptions, TransformerDecoder,
                                TransformerDecoderOptions>(t, t.num_decoder_layers());
  register_module("encoder", encoder.ptr());
  register_module("decoder", decoder.ptr());
  for (Tensor& p : parameters())
    if (p.dim() > 1) init::xavier_uniform_(p);
}

Tensor TransformerImpl::forward(const Tensor& src, const Tensor& tgt, const Tensor& src_mask,
                                const Tensor& tgt_mask, const Tensor& memory_mask,
                                const Tensor& src_key_padding_mask,
                                const Tensor& tgt_key_padding_mask,
                                const Tensor& memory_key_padding_mask) {
  const int batch_dim = options.batch_first() ? 0 : 1;
  LT_CHECK(src.dim() == 3 && tgt.dim() == 3 && src.size(batch_dim) == tgt.size(batch_dim),
           "Transformer: src ", shape_str(src.sizes()), " and tgt ", shape_str(tgt.sizes()),
           " must be 3-d with the same batch size in dim ", batch_dim);
  LT_CHECK(src.size(2) == options.d_model() && tgt.size(2) == options.d_model(),
           "Transformer: src ", shape_str(src.sizes()), " and tgt ", shape_str(tgt.sizes()),
           " must have d_model = ", options.d_model(), " features");
  Tensor memory = encoder.forward(src, src_mask, src_key_padding_mask);
  return decoder.forward(tgt, memory, tgt_mask, memory_mask, tgt_key_padding_mask,
                         memory_key_padding_mask);
}

Tensor TransformerImpl::generate_square_subsequent_mask(int64_t sz) {
  LT_CHECK(sz >= 0, "Transformer::generate_square_subsequent_mask: size must be >= 0, got ", sz);
  return full({sz, sz}, -std::numeric_limits<double>::infinity()).triu(1);
}

}  // namespace lt::nn
