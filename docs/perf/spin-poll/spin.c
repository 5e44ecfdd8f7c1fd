#include <stdint.h>
#include <sys/types.h>
typedef ssize_t (*cq_read_fn)(void *cq, void *buf, uint64_t count);
/* Polls fn until it returns something other than -EAGAIN (-11), at most max_polls times. */
ssize_t spin_cq_read(cq_read_fn fn, void *cq, void *buf, uint64_t count, int64_t max_polls) {
    ssize_t rc = -11;
    for (int64_t i = 0; i < max_polls; i++) {
        rc = fn(cq, buf, count);
        if (rc != -11) return rc;
    }
    return rc;
}
