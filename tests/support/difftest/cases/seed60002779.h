#ifndef DIFFTEST_BATCH_H
#define DIFFTEST_BATCH_H
#define p60002779_M1_p(v, c) ((v).s##c)
#define p60002779_M1(v) p60002779_M1_p(v, 5)
#endif
