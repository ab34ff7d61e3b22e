#pragma once

namespace digit_sum {
long long of(long long n);
}
