/* Unit test of the candidate checks of policy/victim_checks.h on the stand-in
 * items of tests/fake/memcached.h: a resident item of the class passes; a
 * free chunk, an unlinked item or one of another class does not; a listed
 * entry (logging's victim lists) stays valid while its chunk holds the item it
 * listed, and not once the chunk was freed and taken by another item (a new
 * CAS), even of the same class and linked; with CAS off only the class and
 * linked checks remain; ac_chosen finds what a call already chose. */
#include "memcached.h"
#include "../policy/victim_checks.h"
#include "check.h"
#include <string.h>

static item chunks[3];

/* memcached's do_item_alloc + do_item_link: a linked item of class clsid with its CAS */
static void store(item *it, unsigned clsid, uint64_t cas, bool with_cas) {
    memset(it, 0, sizeof(*it));
    it->slabs_clsid = (uint8_t)clsid;
    it->it_flags = ITEM_LINKED | (with_cas ? ITEM_CAS : 0);
    ITEM_set_cas(it, cas);
}

/* do_item_unlink + the slab free: the chunk's flags say so, its bytes stay */
static void free_chunk(item *it) {
    it->it_flags = (uint16_t)((it->it_flags & ~ITEM_LINKED) | ITEM_SLABBED);
}

int main(void) {
    store(&chunks[0], 1, 41, true);
    CHECK(ac_is_resident(&chunks[0], 1));
    CHECK(!ac_is_resident(&chunks[0], 2));
    struct ac_listed e = ac_listed_of(&chunks[0]);
    CHECK_EQ(e.cas, 41);
    CHECK(ac_still_listed(e, 1));
    CHECK(!ac_still_listed(e, 2));

    /* an update: the old item unlinked, its chunk free */
    free_chunk(&chunks[0]);
    CHECK(!ac_is_resident(&chunks[0], 1));
    CHECK(!ac_still_listed(e, 1));
    /* the chunk taken by a new item of the same class: resident, but not the listed one */
    store(&chunks[0], 1, 97, true);
    CHECK(ac_is_resident(&chunks[0], 1));
    CHECK(!ac_still_listed(e, 1));
    /* a new listing of that chunk names the new item */
    CHECK(ac_still_listed(ac_listed_of(&chunks[0]), 1));

    /* CAS off (-C): every CAS reads 0; a reused chunk cannot be told apart */
    store(&chunks[1], 1, 0, false);
    struct ac_listed f = ac_listed_of(&chunks[1]);
    CHECK_EQ(f.cas, 0);
    free_chunk(&chunks[1]);
    CHECK(!ac_still_listed(f, 1));
    store(&chunks[1], 1, 0, false);
    CHECK(ac_still_listed(f, 1));

    item *out[2] = { &chunks[1], &chunks[2] };
    CHECK(ac_chosen(&chunks[2], out, 2));
    CHECK(!ac_chosen(&chunks[2], out, 1));
    CHECK(!ac_chosen(&chunks[0], out, 2));
    return check_report("test_victim_checks");
}
