#include <cstdio>
int main() {
    long long n;
    scanf("%lld", &n);
    printf("? 1\n");   // never flushed: the interactor waits, and so does the submission
    char reply[8];
    scanf("%7s", reply);
    printf("! 1\n");
}
