// `wcwidth` is the table terminals and their libraries (ncurses, readline) lay text out by: East Asian Wide and
// Fullwidth characters take two columns, combining marks none. It answers for the calling thread's locale, so the
// locale is switched to C.UTF-8 (built into glibc since 2.35) around the call and back, leaving the process's own
// locale (the C locale of a Swift program, which prints nothing wide) alone.
#define _GNU_SOURCE
#include <locale.h>
#include <pthread.h>
#include <wchar.h>

#include "display_width.h"

static locale_t utf8_locale = (locale_t)0;
static pthread_once_t utf8_locale_once = PTHREAD_ONCE_INIT;

static void load_utf8_locale(void) {
    utf8_locale = newlocale(LC_CTYPE_MASK, "C.UTF-8", (locale_t)0);
}

int tc_scalar_columns(uint32_t scalar) {
    pthread_once(&utf8_locale_once, load_utf8_locale);
    if (utf8_locale == (locale_t)0) return -2;
    locale_t previous = uselocale(utf8_locale);
    int columns = wcwidth((wchar_t)scalar);
    uselocale(previous);
    return columns;
}
