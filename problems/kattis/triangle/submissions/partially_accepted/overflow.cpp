#include <cstdio>
int main() {
    long long n;
    scanf("%lld", &n);
    printf("%lld\n", n * (n + 1) / 2);
}
