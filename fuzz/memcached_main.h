/* Forced into memcached.c (built with -Dmain=memcached_main): the renamed
 * main() gets a prototype, as -Wmissing-prototypes -Werror wants. */
int main(int argc, char **argv);
