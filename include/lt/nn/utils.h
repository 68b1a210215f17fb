// torch::nn::utils: gradient clipping. Clipping is recorded like any op (on the lazy device it
// joins the step's graph); only reading the returned norm is an observation.
#pragma once
#include <initializer_list>
#include <iosfwd>
#include <vector>

#include "lt/tensor.h"

namespace lt::nn::utils {

// The total gradient norm clip_grad_norm_ measured. It converts to double as libtorch's return
// value does; the conversion reads it (a sync on the lazy device), so a program that ignores it
// never waits.
class GradNorm {
 public:
  explicit GradNorm(Tensor total) : total_(std::move(total)) {}
  operator double() const;
  const Tensor& tensor() const { return total_; }

 private:
  Tensor total_;
};
std::ostream& operator<<(std::ostream& os, const GradNorm& n);

// Scales every defined gradient by min(1, max_norm / (total + 1e-6)), where total is the norm of
// order norm_type (inf: the largest magnitude) of all gradients together. error_if_nonfinite
// reads the norm and throws if it is NaN or infinite, before anything is scaled.
GradNorm clip_grad_norm_(const std::vector<Tensor>& parameters, double max_norm,
                         double norm_type = 2.0, bool error_if_nonfinite = false);
GradNorm clip_grad_norm_(std::initializer_list<Tensor> parameters, double max_norm,
                         double norm_type = 2.0, bool error_if_nonfinite = false);
GradNorm clip_grad_norm_(const Tensor& parameter, double max_norm, double norm_type = 2.0,
                         bool error_if_nonfinite = false);

// Clamps every defined gradient to [-clip_value, clip_value].
void clip_grad_value_(const std::vector<Tensor>& parameters, double clip_value);
void clip_grad_value_(std::initializer_list<Tensor> parameters, double clip_value);
void clip_grad_value_(const Tensor& parameter, double clip_value);

}  // namespace lt::nn::utils
