#include <iostream>
int main() {
    volatile unsigned long x = 0;
    for (;;) x++;
}
