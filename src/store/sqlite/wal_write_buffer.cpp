#include "store/sqlite/wal_write_buffer.h"

#include <sqlite3.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <mutex>
#include <new>
#include <vector>

namespace baton::sqlite {
namespace {

// Past this many buffered bytes the next write goes out first (a big commit, or pages
// spilled from the cache mid-transaction).
constexpr size_t kMaxBuffered = 4 << 20;
// The most bytes given to the real VFS in one write.
constexpr size_t kMaxWrite = 64 << 10;

std::atomic<int64_t> g_writes_asked{0};
std::atomic<int64_t> g_writes_issued{0};

sqlite3_vfs* g_real = nullptr;  // the default VFS this one wraps
sqlite3_vfs g_vfs;

// What SQLite allocates for a file of this VFS: our part, then the real file.
struct File {
  sqlite3_file base;  // first: SQLite sees this
  bool wal;
  // Bytes not yet written, for offsets [at, at + pending.size()).
  std::vector<char>* pending;
  sqlite3_int64 at;
  sqlite3_file* real() { return reinterpret_cast<sqlite3_file*>(this + 1); }
};

File* Self(sqlite3_file* f) {
  return reinterpret_cast<File*>(f);
}

int Flush(File* f) {
  if (f->pending == nullptr || f->pending->empty()) return SQLITE_OK;
  // In pieces of at most kMaxWrite: the unix VFS writes at most 128 KiB - 1 bytes a call
  // (it masks the length) and reports SQLITE_FULL for a piece it wrote nothing of.
  int rc = SQLITE_OK;
  const std::vector<char>& buf = *f->pending;
  for (size_t done = 0; done < buf.size() && rc == SQLITE_OK; done += kMaxWrite) {
    const size_t n = std::min(kMaxWrite, buf.size() - done);
    rc = f->real()->pMethods->xWrite(f->real(), buf.data() + done, static_cast<int>(n),
                                     f->at + static_cast<sqlite3_int64>(done));
    g_writes_issued.fetch_add(1, std::memory_order_relaxed);
  }
  f->pending->clear();
  return rc;
}

int Close(sqlite3_file* p) {
  File* f = Self(p);
  int rc = Flush(f);
  delete f->pending;
  f->pending = nullptr;
  const int closed = f->real()->pMethods->xClose(f->real());
  return rc != SQLITE_OK ? rc : closed;
}

int Read(sqlite3_file* p, void* out, int amount, sqlite3_int64 offset) {
  File* f = Self(p);
  if (int rc = Flush(f); rc != SQLITE_OK) return rc;
  return f->real()->pMethods->xRead(f->real(), out, amount, offset);
}

int Write(sqlite3_file* p, const void* data, int amount, sqlite3_int64 offset) {
  File* f = Self(p);
  if (!f->wal) return f->real()->pMethods->xWrite(f->real(), data, amount, offset);
  g_writes_asked.fetch_add(1, std::memory_order_relaxed);
  std::vector<char>& buf = *f->pending;
  const bool follows = !buf.empty() && offset == f->at + static_cast<sqlite3_int64>(buf.size());
  if (!follows || buf.size() + static_cast<size_t>(amount) > kMaxBuffered) {
    if (int rc = Flush(f); rc != SQLITE_OK) return rc;
    f->at = offset;
  }
  const char* bytes = static_cast<const char*>(data);
  buf.insert(buf.end(), bytes, bytes + amount);
  return SQLITE_OK;
}

int Truncate(sqlite3_file* p, sqlite3_int64 size) {
  File* f = Self(p);
  if (int rc = Flush(f); rc != SQLITE_OK) return rc;
  return f->real()->pMethods->xTruncate(f->real(), size);
}

int Sync(sqlite3_file* p, int flags) {
  File* f = Self(p);
  if (int rc = Flush(f); rc != SQLITE_OK) return rc;
  return f->real()->pMethods->xSync(f->real(), flags);
}

int FileSize(sqlite3_file* p, sqlite3_int64* size) {
  File* f = Self(p);
  if (int rc = Flush(f); rc != SQLITE_OK) return rc;
  return f->real()->pMethods->xFileSize(f->real(), size);
}

int Lock(sqlite3_file* p, int level) {
  return Self(p)->real()->pMethods->xLock(Self(p)->real(), level);
}
int Unlock(sqlite3_file* p, int level) {
  return Self(p)->real()->pMethods->xUnlock(Self(p)->real(), level);
}
int CheckReservedLock(sqlite3_file* p, int* out) {
  return Self(p)->real()->pMethods->xCheckReservedLock(Self(p)->real(), out);
}
int FileControl(sqlite3_file* p, int op, void* arg) {
  File* f = Self(p);
  if (int rc = Flush(f); rc != SQLITE_OK) return rc;
  return f->real()->pMethods->xFileControl(f->real(), op, arg);
}
int SectorSize(sqlite3_file* p) {
  return Self(p)->real()->pMethods->xSectorSize(Self(p)->real());
}
int DeviceCharacteristics(sqlite3_file* p) {
  return Self(p)->real()->pMethods->xDeviceCharacteristics(Self(p)->real());
}
int ShmMap(sqlite3_file* p, int region, int size, int extend, void volatile** out) {
  return Self(p)->real()->pMethods->xShmMap(Self(p)->real(), region, size, extend, out);
}
int ShmLock(sqlite3_file* p, int offset, int n, int flags) {
  return Self(p)->real()->pMethods->xShmLock(Self(p)->real(), offset, n, flags);
}
void ShmBarrier(sqlite3_file* p) {
  Self(p)->real()->pMethods->xShmBarrier(Self(p)->real());
}
int ShmUnmap(sqlite3_file* p, int delete_flag) {
  return Self(p)->real()->pMethods->xShmUnmap(Self(p)->real(), delete_flag);
}
int Fetch(sqlite3_file* p, sqlite3_int64 offset, int amount, void** out) {
  File* f = Self(p);
  if (int rc = Flush(f); rc != SQLITE_OK) return rc;
  return f->real()->pMethods->xFetch(f->real(), offset, amount, out);
}
int Unfetch(sqlite3_file* p, sqlite3_int64 offset, void* page) {
  return Self(p)->real()->pMethods->xUnfetch(Self(p)->real(), offset, page);
}

// Our methods for a real file of methods `version`: from 3 on, memory-mapped reads too.
constexpr sqlite3_io_methods MethodsFor(int version) {
  const bool mapped = version >= 3;
  return {mapped ? 3 : 2,
          Close,
          Read,
          Write,
          Truncate,
          Sync,
          FileSize,
          Lock,
          Unlock,
          CheckReservedLock,
          FileControl,
          SectorSize,
          DeviceCharacteristics,
          ShmMap,
          ShmLock,
          ShmBarrier,
          ShmUnmap,
          mapped ? Fetch : nullptr,
          mapped ? Unfetch : nullptr};
}
const sqlite3_io_methods kMethods3 = MethodsFor(3);
const sqlite3_io_methods kMethods2 = MethodsFor(2);

int Open(sqlite3_vfs*, sqlite3_filename name, sqlite3_file* p, int flags, int* out_flags) {
  File* f = Self(p);
  f->wal = (flags & SQLITE_OPEN_WAL) != 0;
  f->pending = nullptr;
  f->at = 0;
  const int rc = g_real->xOpen(g_real, name, f->real(), flags, out_flags);
  // SQLite calls xClose whenever pMethods is set, even after a failed open: mirror the
  // real file's, so that it is closed exactly when SQLite would have closed it.
  if (f->real()->pMethods == nullptr) {
    f->base.pMethods = nullptr;
    return rc;
  }
  if (f->wal) f->pending = new (std::nothrow) std::vector<char>();
  if (f->wal && f->pending == nullptr) f->wal = false;  // no memory: write through
  f->base.pMethods = f->real()->pMethods->iVersion >= 3 ? &kMethods3 : &kMethods2;
  return rc;
}

// Everything but opening a file is the real VFS's.
int Delete(sqlite3_vfs*, const char* name, int sync_dir) {
  return g_real->xDelete(g_real, name, sync_dir);
}
int Access(sqlite3_vfs*, const char* name, int flags, int* out) {
  return g_real->xAccess(g_real, name, flags, out);
}
int FullPathname(sqlite3_vfs*, const char* name, int size, char* out) {
  return g_real->xFullPathname(g_real, name, size, out);
}
void* DlOpen(sqlite3_vfs*, const char* name) {
  return g_real->xDlOpen(g_real, name);
}
void DlError(sqlite3_vfs*, int size, char* out) {
  g_real->xDlError(g_real, size, out);
}
void (*DlSym(sqlite3_vfs*, void* handle, const char* symbol))(void) {
  return g_real->xDlSym(g_real, handle, symbol);
}
void DlClose(sqlite3_vfs*, void* handle) {
  g_real->xDlClose(g_real, handle);
}
int Randomness(sqlite3_vfs*, int size, char* out) {
  return g_real->xRandomness(g_real, size, out);
}
int Sleep(sqlite3_vfs*, int micros) {
  return g_real->xSleep(g_real, micros);
}
int CurrentTime(sqlite3_vfs*, double* out) {
  return g_real->xCurrentTime(g_real, out);
}
int GetLastError(sqlite3_vfs*, int size, char* out) {
  return g_real->xGetLastError ? g_real->xGetLastError(g_real, size, out) : 0;
}
int CurrentTimeInt64(sqlite3_vfs*, sqlite3_int64* out) {
  return g_real->xCurrentTimeInt64(g_real, out);
}

constexpr const char* kName = "baton-wal-buffer";

}  // namespace

const char* WalWriteBufferVfs() {
  static std::once_flag once;
  std::call_once(once, [] {
    g_real = sqlite3_vfs_find(nullptr);
    std::memset(&g_vfs, 0, sizeof(g_vfs));
    g_vfs.iVersion = 2;
    g_vfs.szOsFile = static_cast<int>(sizeof(File)) + g_real->szOsFile;
    g_vfs.mxPathname = g_real->mxPathname;
    g_vfs.zName = kName;
    g_vfs.xOpen = Open;
    g_vfs.xDelete = Delete;
    g_vfs.xAccess = Access;
    g_vfs.xFullPathname = FullPathname;
    g_vfs.xDlOpen = DlOpen;
    g_vfs.xDlError = DlError;
    g_vfs.xDlSym = DlSym;
    g_vfs.xDlClose = DlClose;
    g_vfs.xRandomness = Randomness;
    g_vfs.xSleep = Sleep;
    g_vfs.xCurrentTime = CurrentTime;
    g_vfs.xGetLastError = GetLastError;
    g_vfs.xCurrentTimeInt64 = CurrentTimeInt64;
    sqlite3_vfs_register(&g_vfs, /*makeDflt=*/0);
  });
  return kName;
}

WalWriteBufferStats GetWalWriteBufferStats() {
  return {g_writes_asked.load(std::memory_order_relaxed),
          g_writes_issued.load(std::memory_order_relaxed)};
}

}  // namespace baton::sqlite
