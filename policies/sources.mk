# Our sources inside the server (memcached/Makefile, fuzz/Makefile include this):
# core/ (hooks, registry, options and their size grammar ac_size.c, the request
# path), policy/, tier/, store/: every .c and .h of these directories.
# Compiled with AC_INC: upstream's files include "ac_hooks.h" (core/), ours
# include "store/...", "policy/..." from policies/.
AC_DIRS := core policy tier store
AC_SRCS := $(foreach d,$(AC_DIRS),$(wildcard $(TOP)/policies/$(d)/*.c))
AC_HDRS := $(foreach d,$(AC_DIRS),$(wildcard $(TOP)/policies/$(d)/*.h $(TOP)/policies/$(d)/*.def))
AC_INC := -I$(TOP)/policies/core -I$(TOP)/policies
