#include "digit_sum.h"

namespace digit_sum {
long long of(long long n) {
    long long s = 0;
    for (; n > 0; n /= 10) s += n % 10;
    return s;
}
}
