#include <cstdio>
int main() {
    long long n;
    scanf("%lld", &n);
    printf("%lld %lld\n", n / 2, n - n / 2);
}
