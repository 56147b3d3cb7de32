/* Runs STREAM (HPCC's edition of McCalpin's stream.c) over three arrays of
 * the given number of doubles, on the threads OMP_NUM_THREADS asks for,
 * and prints the best rate of each kernel in bytes a second, one
 * "kernel rate" line each, after STREAM's own report on stderr. */
#include "hpcc.h"

int main(int argc, char **argv) {
    char *end = NULL;
    long elements = argc == 2 ? strtol(argv[1], &end, 10) : 0;
    if (argc != 2 || end == argv[1] || *end != '\0' || elements < 1000 || elements > 1L << 30) {
        fprintf(stderr, "usage: %s ELEMENTS (doubles in each array, 1000 to 2^30)\n", argv[0]);
        return 2;
    }
    HPCC_Params params;
    memset(&params, 0, sizeof params);
    strcpy(params.outFname, "/dev/stderr");
    params.ArrayElements = elements;
    double copy, scale, add, triad;
    int failure = 0;
    if (HPCC_Stream(&params, 1, 0, 0, &copy, &scale, &add, &triad, &failure) != 0 || failure) {
        fprintf(stderr, "STREAM failed its own checks\n");
        return 1;
    }
    printf("copy %.6e\nscale %.6e\nadd %.6e\ntriad %.6e\n", copy * 1e9, scale * 1e9, add * 1e9,
           triad * 1e9);
    return 0;
}
