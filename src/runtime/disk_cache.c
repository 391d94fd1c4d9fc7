/* The on-disk kernel cache (see disk_cache.h).
 *
 * Where: $TKC_CACHE_DIR, else $XDG_CACHE_HOME/tkc, else $HOME/.cache/tkc; TKC_CACHE_DIR= (empty)
 * turns it off. Folders are created 0700; the cache folder must belong to the user and be writable
 * by nobody else (a planted entry would be code this process runs), else the cache is off.
 * An entry is one file KIND/<32 hex digits of the key's hash>: a header (magic, format version,
 * lengths, a checksum of key and data), the whole key (so a hash collision is a miss, not a wrong
 * kernel) and the data. Writers fill a private 0600 temporary file and rename it into place, so a
 * reader sees a whole entry or none, and two processes storing the same entry both succeed.
 * Reading checks owner, size, checksum and key; a damaged entry is removed and rebuilt.
 * Size bound: TKC_CACHE_MB megabytes (default 1024); past it the least recently used entries go
 * (a hit refreshes the entry's time). Keys carry tkc's version, so another version's entries are
 * never read (they age out). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "base/errno_str.h"
#include "base/fsize_guard.h"
#include "runtime/disk_cache.h"
#include "tkc/runtime.h"

#define FORMAT_VERSION 1u
#define MAX_ENTRY ((uint64_t)1 << 30)

typedef struct entry_header {
  char magic[8]; /* "tkccache" */
  uint32_t version, reserved;
  uint64_t keylen, datalen, sum;
} entry_header;

static atomic_ullong n_hits, n_misses, n_stores, n_rejected, n_errors;
static atomic_uint tmp_serial;

static void note(const char *fmt, const char *a, const char *b) {
  if (tkc_debug_level() >= 2) fprintf(stderr, fmt, a, b);
}

/* the cache folder into buf; 0 when the cache is off */
static int cache_root(char *buf, size_t n) {
  const char *e = getenv("TKC_CACHE_DIR"), *x = getenv("XDG_CACHE_HOME"), *h = getenv("HOME");
  int k;
  if (e) k = *e ? snprintf(buf, n, "%s", e) : -1;
  else if (x && *x == '/') k = snprintf(buf, n, "%s/tkc", x);
  else if (h && *h == '/') k = snprintf(buf, n, "%s/.cache/tkc", h);
  else k = -1;
  return k > 0 && (size_t)k < n;
}

/* creates path and its parents (0700 where new); 1 when it is then a folder of ours that nobody
 * else may write */
static int make_private_dir(const char *path) {
  char p[4096];
  if (snprintf(p, sizeof p, "%s", path) >= (int)sizeof p) return 0;
  for (char *s = p + 1; *s; s++)
    if (*s == '/') {
      *s = 0;
      if (mkdir(p, 0700) && errno != EEXIST) return 0;
      *s = '/';
    }
  if (mkdir(p, 0700) && errno != EEXIST) return 0;
  struct stat st;
  if (lstat(p, &st) || !S_ISDIR(st.st_mode)) return 0;
  if (st.st_uid != geteuid() || (st.st_mode & 022)) {
    note("tkc: disk cache: %s is not a folder of this user that only it can write; the cache is off%s\n", p, "");
    return 0;
  }
  return 1;
}

/* root/kind/<hash of key> into path (and root/kind into dir); 0 when off or too long */
static int entry_path(const char *kind, const void *key, size_t keylen, char *dir, size_t nd, char *path, size_t np) {
  char root[4096];
  if (!cache_root(root, sizeof root)) return 0;
  int k = snprintf(dir, nd, "%s/%s", root, kind);
  if (k <= 0 || (size_t)k >= nd) return 0;
  k = snprintf(path, np, "%s/%016llx%016llx", dir, (unsigned long long)tkc_hash64(key, keylen, 0),
               (unsigned long long)tkc_hash64(key, keylen, 0x9e3779b97f4a7c15ull));
  return k > 0 && (size_t)k < np;
}

static int read_all(int fd, void *buf, size_t n) {
  for (size_t got = 0; got < n;) {
    ssize_t r = read(fd, (char *)buf + got, n - got);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return 0;
    got += (size_t)r;
  }
  return 1;
}

static int write_all(int fd, const void *buf, size_t n) {
  for (size_t put = 0; put < n;) {
    ssize_t w = write(fd, (const char *)buf + put, n - put);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return 0;
    put += (size_t)w;
  }
  return 1;
}

static uint64_t entry_sum(const void *key, size_t keylen, const void *data, size_t n) {
  return tkc_hash64(data, n, tkc_hash64(key, keylen, FORMAT_VERSION));
}

bool tkc_dcache_on(void) {
  char root[4096];
  return cache_root(root, sizeof root);
}

void *tkc_dcache_get(const char *kind, const void *key, size_t keylen, size_t *n) {
  char dir[4200], path[4300];
  *n = 0;
  if (!entry_path(kind, key, keylen, dir, sizeof dir, path, sizeof path)) return NULL;
  int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) atomic_fetch_add(&n_misses, 1);
    else atomic_fetch_add(&n_errors, 1), note("tkc: disk cache: cannot read %s: %s\n", path, TKC_STRERROR(errno));
    return NULL;
  }
  struct stat st;
  entry_header h;
  char *buf = NULL;
  const char *why = NULL;
  if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_uid != geteuid()) why = "not a file of this user";
  else if ((uint64_t)st.st_size < sizeof h || (uint64_t)st.st_size > MAX_ENTRY || !read_all(fd, &h, sizeof h)) why = "truncated";
  else if (memcmp(h.magic, "tkccache", 8) || h.version != FORMAT_VERSION) why = "another format";
  else if (h.keylen != keylen || h.datalen > MAX_ENTRY || sizeof h + h.keylen + h.datalen != (uint64_t)st.st_size) why = "truncated or of another key";
  else if (!(buf = tkc_malloc(keylen + h.datalen + 1)) || !read_all(fd, buf, keylen + h.datalen)) why = "unreadable";
  else if (memcmp(buf, key, keylen)) why = "of another key";
  else if (entry_sum(buf, keylen, buf + keylen, h.datalen) != h.sum) why = "corrupt (checksum)";
  if (!why) futimens(fd, NULL); /* recently used: evicted last */
  close(fd);
  if (why) {
    tkc_free(buf);
    if (strcmp(why, "of another key")) unlink(path); /* a hash collision is left alone */
    atomic_fetch_add(&n_rejected, 1);
    note("tkc: disk cache: %s is %s; rebuilding it\n", path, why);
    return NULL;
  }
  memmove(buf, buf + keylen, h.datalen);
  *n = h.datalen;
  atomic_fetch_add(&n_hits, 1);
  return buf;
}

typedef struct file_age {
  char name[40];
  time_t mtime;
  off_t size;
  int kind; /* index into the folder list */
} file_age;

static int by_age(const void *a, const void *b) {
  const file_age *x = a, *y = b;
  return (x->mtime > y->mtime) - (x->mtime < y->mtime);
}

static int64_t bound_bytes(void) {
  const char *e = getenv("TKC_CACHE_MB");
  long long mb = e && *e ? atoll(e) : 1024;
  return mb < 1 ? (int64_t)1 << 20 : (int64_t)mb << 20;
}

/* removes the least recently used entries of every kind folder of root until the cache is within
 * its bound (to 90% of it), and temporary files left by killed writers (older than an hour) */
static void evict(const char *root) {
  DIR *rd = opendir(root);
  if (!rd) return;
  char kinds[16][64];
  int nk = 0;
  struct dirent *de;
  while ((de = readdir(rd)) && nk < 16)
    if (de->d_name[0] != '.' && strlen(de->d_name) < sizeof kinds[0]) memcpy(kinds[nk++], de->d_name, strlen(de->d_name) + 1);
  closedir(rd);
  file_age *files = NULL;
  size_t nf = 0, cap = 0;
  int64_t total = 0;
  time_t now = time(NULL);
  for (int k = 0; k < nk; k++) {
    char dir[4200];
    snprintf(dir, sizeof dir, "%s/%s", root, kinds[k]);
    DIR *d = opendir(dir);
    if (!d) continue;
    while ((de = readdir(d))) {
      char p[4500];
      struct stat st;
      if (de->d_name[0] == '.' && strncmp(de->d_name, ".tmp-", 5)) continue;
      if (snprintf(p, sizeof p, "%s/%s", dir, de->d_name) >= (int)sizeof p || lstat(p, &st) || !S_ISREG(st.st_mode)) continue;
      if (!strncmp(de->d_name, ".tmp-", 5)) {
        if (now - st.st_mtime > 3600) unlink(p);
        continue;
      }
      if (strlen(de->d_name) >= sizeof files->name) continue;
      if (nf == cap) {
        file_age *g = tkc_realloc(files, (cap = cap ? cap * 2 : 64) * sizeof *g);
        if (!g) break;
        files = g;
      }
      memcpy(files[nf].name, de->d_name, strlen(de->d_name) + 1); /* fits: checked above */
      files[nf].mtime = st.st_mtime, files[nf].size = st.st_size, files[nf].kind = k;
      total += st.st_size;
      nf++;
    }
    closedir(d);
  }
  int64_t bound = bound_bytes();
  if (total > bound) {
    qsort(files, nf, sizeof *files, by_age);
    for (size_t i = 0; i < nf && total > bound / 10 * 9; i++) {
      char p[4300];
      if (snprintf(p, sizeof p, "%s/%s/%s", root, kinds[files[i].kind], files[i].name) < (int)sizeof p && !unlink(p)) total -= files[i].size;
    }
  }
  tkc_free(files);
}

void tkc_dcache_put(const char *kind, const void *key, size_t keylen, const void *data, size_t n) {
  char root[4096], dir[4200], path[4300], tmp[4400];
  if (!cache_root(root, sizeof root) || !entry_path(kind, key, keylen, dir, sizeof dir, path, sizeof path)) return;
  if (!make_private_dir(root) || !make_private_dir(dir)) {
    atomic_fetch_add(&n_errors, 1);
    note("tkc: disk cache: cannot use the folder %s%s\n", dir, "");
    return;
  }
  snprintf(tmp, sizeof tmp, "%s/.tmp-%ld-%u-%lx", dir, (long)getpid(), atomic_fetch_add(&tmp_serial, 1), (unsigned long)time(NULL));
  entry_header h = {{'t', 'k', 'c', 'c', 'a', 'c', 'h', 'e'}, FORMAT_VERSION, 0, keylen, n, entry_sum(key, keylen, data, n)};
  tkc_fsize_guard g; /* past the file size limit: EFBIG, not SIGXFSZ */
  tkc_fsize_guard_begin(&g);
  int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  int ok = fd >= 0 && write_all(fd, &h, sizeof h) && write_all(fd, key, keylen) && write_all(fd, data, n);
  if (fd >= 0 && close(fd)) ok = 0;
  tkc_fsize_guard_end(&g);
  if (ok && rename(tmp, path)) ok = 0;
  if (!ok) {
    int e = errno;
    if (fd >= 0) unlink(tmp);
    atomic_fetch_add(&n_errors, 1);
    note("tkc: disk cache: cannot store %s: %s\n", path, TKC_STRERROR(e));
    return;
  }
  atomic_fetch_add(&n_stores, 1);
  evict(root);
}

void tkc_disk_cache_stats(tkc_disk_cache_info *out) {
  if (!out) return;
  memset(out, 0, sizeof *out);
  out->hits = (int64_t)atomic_load(&n_hits);
  out->misses = (int64_t)atomic_load(&n_misses);
  out->stores = (int64_t)atomic_load(&n_stores);
  out->rejected = (int64_t)atomic_load(&n_rejected);
  out->errors = (int64_t)atomic_load(&n_errors);
  out->enabled = cache_root(out->dir, sizeof out->dir);
  if (!out->enabled) out->dir[0] = 0;
  out->bound_bytes = bound_bytes();
}
