/* libvma_stub: an empty shared object named like libvma (libvma.so.9.8.84)
 * for the emulated engine (vmaengine.c), preloaded by the system tests:
 * nicstalld believes a vmastat.<pid> only from a process that maps a
 * root-installed libvma.so* (collectors/flows/claimv.h), as a real libvma
 * process does. It does nothing. */
int nicstall_libvma_stub;
