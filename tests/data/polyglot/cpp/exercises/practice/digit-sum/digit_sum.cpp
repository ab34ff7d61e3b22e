#include "digit_sum.h"

namespace digit_sum {
}
