// The umbrella header of lazytensor: #include <lt/lt.h>.
#pragma once
#include "lt/array_ref.h"
#include "lt/device.h"
#include "lt/dtype.h"
#include "lt/error.h"
#include "lt/lazy.h"
#include "lt/ops.h"
#include "lt/options.h"
#include "lt/scalar.h"
#include "lt/tensor.h"
