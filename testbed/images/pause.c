/* The pod sandbox process: holds the pod's namespaces, reaps orphans, exits on SIGTERM/SIGINT.
 * Built static so the pause image needs nothing else. With -v it prints a version and exits, as the
 * real pause does: kubeadm's upgrade health check runs it so, as a Job that must complete. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void on_term(int sig) { (void)sig; _exit(0); }

static void on_child(int sig) {
  (void)sig;
  while (waitpid(-1, NULL, WNOHANG) > 0) {
  }
}

int main(int argc, char **argv) {
  if (argc > 1 && strcmp(argv[1], "-v") == 0) {
    puts("pause.c (kubeadm-rs testbed)");
    return 0;
  }
  struct sigaction term = {0}, child = {0};
  term.sa_handler = on_term;
  child.sa_handler = on_child;
  child.sa_flags = SA_NOCLDSTOP;
  if (sigaction(SIGINT, &term, NULL) < 0 || sigaction(SIGTERM, &term, NULL) < 0 ||
      sigaction(SIGCHLD, &child, NULL) < 0)
    return 1;
  for (;;) pause();
}
