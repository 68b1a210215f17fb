// Autograd controls. Gradients are recorded for every op whose inputs require grad, on every
// device (on the lazy device backward() records more graph, compiled with the step).
#pragma once

namespace lt {

bool is_grad_enabled();
void set_grad_enabled(bool enabled);

// Disables gradient recording in its scope (for this thread), like torch::NoGradGuard.
class NoGradGuard {
 public:
  NoGradGuard() : prev_(is_grad_enabled()) { set_grad_enabled(false); }
  ~NoGradGuard() { set_grad_enabled(prev_); }
  NoGradGuard(const NoGradGuard&) = delete;
  NoGradGuard& operator=(const NoGradGuard&) = delete;

 private:
  bool prev_;
};

}  // namespace lt
