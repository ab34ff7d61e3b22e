#include <stdio.h>
#include <string.h>
int main(void) {
    char s[256];
    if (!fgets(s, sizeof s, stdin)) return 1;
    s[strcspn(s, "\n")] = 0;
    printf("Hello, %s!\n", s);
    return 0;
}
