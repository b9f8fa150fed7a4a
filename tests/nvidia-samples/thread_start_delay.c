/*
 * Test harness only (tests/sim-nvidia-storage.test.ts), preloaded into NVIDIA's storage programs: every new thread
 * waits 20 ms before running its start routine.
 *
 * Why: their workers do `m_thread = std::thread{thread_proc, this, core}` and thread_proc's first act is
 * set_thread_affinity(self->m_thread, core), which reads m_thread from the new thread before the creating thread has
 * stored it (a data race in NVIDIA's code: pthread_setaffinity_np on handle 0 crashes). On a machine with idle cores
 * the creating thread nearly always wins; on a loaded two-core runner the new thread often runs first. The delay
 * lets the creator finish its assignment; nothing else of the programs changes.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

struct start {
	void *(*routine)(void *);
	void *arg;
};

static void *delayed(void *p)
{
	struct start s = *(struct start *)p;
	struct timespec wait = { 0, 20 * 1000 * 1000 };

	free(p);
	while (nanosleep(&wait, &wait) != 0)
		;
	return s.routine(s.arg);
}

int pthread_create(pthread_t *thread, const pthread_attr_t *attr, void *(*routine)(void *), void *arg)
{
	static int (*real)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
	struct start *s = malloc(sizeof(*s));
	int rc;

	if (real == NULL)
		real = (int (*)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *))dlsym(RTLD_NEXT,
												     "pthread_create");
	if (s == NULL)
		return real(thread, attr, routine, arg);
	s->routine = routine;
	s->arg = arg;
	rc = real(thread, attr, delayed, s);
	if (rc != 0)
		free(s);
	return rc;
}
