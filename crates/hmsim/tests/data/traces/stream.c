/* STREAM-like: three arrays of 2^20 doubles (8 MiB each), copy/scale/add/triad x 5. */
#include <stdio.h>
#include <stdlib.h>
#define N (1 << 20)
int main(void) {
  double *a = malloc(N * sizeof *a), *b = malloc(N * sizeof *b), *c = malloc(N * sizeof *c);
  for (long i = 0; i < N; i++) { a[i] = 1.0; b[i] = 2.0; c[i] = 0.0; }
  for (int k = 0; k < 5; k++) {
    for (long i = 0; i < N; i++) c[i] = a[i];
    for (long i = 0; i < N; i++) b[i] = 3.0 * c[i];
    for (long i = 0; i < N; i++) c[i] = a[i] + b[i];
    for (long i = 0; i < N; i++) a[i] = b[i] + 3.0 * c[i];
  }
  printf("%f\n", a[N / 2]);
  free(a); free(b); free(c);
  return 0;
}
