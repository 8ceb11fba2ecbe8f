import CLMDB
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

extension Environment {
    /// Runs `body` in a read-only transaction (one consistent snapshot) and returns its result.
    ///
    /// Synchronous: the body runs start to finish on the calling thread. Never `await` or do network I/O
    /// inside; a long-lived reader pins old pages and makes the file grow. Reads may nest, also inside a
    /// `write` body (`MDB_NOTLS`: "A thread may use parallel read-only transactions"); a read nested in a
    /// write sees the last committed state, not the write's uncommitted changes.
    ///
    /// Read transactions are pooled (`mdb_txn_reset` / `mdb_txn_renew`).
    /// - Throws: whatever `body` throws, unchanged; `LMDBError.usedAfterFork`; `LMDBError.readersFull` if
    ///   the reader table is still full after `mdb_reader_check`; other `LMDBError`s from LMDB.
    package func read<R>(_ body: (ReadTransaction) throws -> R) throws -> R {
        try checkUsable()
        let state = ThreadState.current
        var recovery = ReadFailureRecovery()
        while true {
            enterShared(state)
            switch readPool.checkOut(environment: handle, stripe: state.stripe) {
            case .success(let txnHandle):
                let txn = ReadTransaction(handle: txnHandle, environment: self)
                defer {
                    txn.invalidate()
                    readPool.checkIn(txnHandle, stripe: state.stripe)
                    leaveShared(state)
                }
                return try body(txn)
            case .failure(let error):
                leaveShared(state)
                try recovery.recover(from: error, in: self, state)
            }
        }
    }

    /// Runs `body` in a write transaction and commits it if `body` returns normally; aborts it if `body`
    /// throws, and rethrows that error unchanged. All or nothing.
    ///
    /// Synchronous, on the calling thread. Writes are serialised across threads and processes by the writer lock
    /// (`WriterLock`, waited for at most `EnvironmentOptions.lockTimeout`) and LMDB's writer mutex behind it; keep
    /// bodies short and never do network I/O inside ("one slow writer stalls every process").
    ///
    /// **The body must be re-runnable.** When the map is full (`MDB_MAP_FULL` from a put or from the
    /// commit), the transaction is aborted, the map doubled (up to `EnvironmentOptions.maximumMapSize`), and
    /// the *whole* body runs again from the start in a new transaction. Side effects outside the transaction
    /// may therefore happen more than once; compute inputs before calling `write`.
    ///
    /// - Throws: whatever `body` throws, unchanged; `LMDBError.lockTimeout` when another process kept the writer lock
    ///   past the bound (nothing was written); `LMDBError.nestedWrite` if this thread is already inside
    ///   a write on this environment (LMDB would deadlock); `LMDBError.mapFull` at the cap, or when growth is
    ///   needed while this thread is inside another transaction of this environment (growing then would
    ///   deadlock); `LMDBError.usedAfterFork`; any commit failure (`EIO`, `ENOSPC`, ...), never reported
    ///   as success.
    /// - Parameter purpose: `.freeingSpace` for a write that removes records: when the map is at its cap, it may
    ///   grow into ``EnvironmentOptions/reservedMapSize`` beyond it (a delete copies pages before it frees any), and
    ///   the map returns to the cap after it commits, so that a full store can always be emptied.
    package func write<R>(_ purpose: WritePurpose = .general, _ body: (WriteTransaction) throws -> R) throws -> R {
        try checkUsable()
        let state = ThreadState.current
        guard !state[environment: serial].inWrite else { throw LMDBError.nestedWrite }
        // Before LMDB's writer mutex, which cannot be waited on for a bounded time (see `WriterLock`).
        let writerLock = try WriterLock.acquire(directory: directory, timeout: options.lockTimeout)
        defer { writerLock.release() }
        var adoptions = 0
        var growthAttempts = 0
        while true {
            enterShared(state)
            state[environment: serial].inWrite = true
            if purpose == .general, let shortage = allocateDiskReserve() {
                leaveWrite(state)
                throw shortage
            }
            var txnPointer: OpaquePointer?
            let beginRC = lmdb_txn_begin(handle, readOnly: false, &txnPointer)
            guard beginRC == MDB_SUCCESS, let txnHandle = txnPointer else {
                leaveWrite(state)
                let error = beginRC == MDB_SUCCESS ? LMDBError.invalidArgument : LMDBError(code: beginRC)
                if error == .mapResized, adoptions < Self.maxAdoptions {
                    adoptions += 1
                    try adoptMapSizeOfOtherProcess(state)
                    continue
                }
                throw error
            }
            // Read under the writer lock, so the newest meta page cannot change; the map size is stable while
            // we hold the gate shared: nobody in this process can resize now.
            let infoAtBegin = lmdb_env_info(handle)
            let mapSizeAtBegin = Int(infoAtBegin.me_mapsize)
            guard Self.buildsOnNewestCommit(txnHandle, newest: infoAtBegin) else {
                lmdb_txn_abort(txnHandle)
                leaveWrite(state)
                throw LMDBError.staleLockTable
            }

            let txn = WriteTransaction(handle: txnHandle, environment: self)
            let outcome: Result<R, any Error>
            do {
                outcome = .success(try body(txn))
            } catch {
                outcome = .failure(error)
            }
            txn.invalidate()

            // lmdb.h: after MDB_MAP_FULL the transaction is unusable; abort and retry it as a whole.
            if txn.hitMapFull {
                lmdb_txn_abort(txnHandle)
                leaveWrite(state)
                growthAttempts += 1
                try growMap(state, observedSize: mapSizeAtBegin, attempt: growthAttempts, purpose: purpose)
                continue
            }
            let value: R
            switch outcome {
            case .failure(let error):
                lmdb_txn_abort(txnHandle)
                leaveWrite(state)
                throw error
            case .success(let result):
                value = result
            }
            if let failure = txn.failure {
                // The body swallowed an LMDB failure; LMDB would refuse the commit (MDB_BAD_TXN) anyway.
                lmdb_txn_abort(txnHandle)
                leaveWrite(state)
                throw failure
            }

            // lmdb.h, mdb_txn_commit: "The transaction handle is freed" whether or not it succeeds.
            let commitRC = lmdb_txn_commit(txnHandle)
            if commitRC == MDB_SUCCESS { padDataFileIfShort() }
            leaveWrite(state)
            if commitRC == MDB_MAP_FULL {
                growthAttempts += 1
                try growMap(state, observedSize: mapSizeAtBegin, attempt: growthAttempts, purpose: purpose)
                continue
            }
            try LMDBError.check(commitRC)
            if purpose == .freeingSpace { returnMapToCap(state) }
            return value
        }
    }
}

// MARK: - The newest commit

extension Environment {
    /// Whether the write transaction `txn` (just begun, so this process holds LMDB's writer lock) continues
    /// from the newest commit, as every write must: its id is the newest meta page's id plus one.
    ///
    /// LMDB takes a write transaction's base from the lock table's "last committed id", not from the meta pages.
    /// If the table lags (an opener killed half-way through initialising it, see `OpenLock`), the transaction
    /// would build on an older snapshot and commit into the meta page that holds the newest commit, erasing it.
    /// `mdb_env_info` picks the newest meta page from the map itself, so comparing the two catches that before
    /// anything is written. Costs one `mdb_env_info` per write transaction.
    static func buildsOnNewestCommit(_ txn: OpaquePointer, newest info: MDB_envinfo) -> Bool {
        lmdb_txn_id(txn) == Int(info.me_last_txnid) + 1
    }
}

/// What a reader does when beginning its read transaction failed, before it tries again: adopt a map another process
/// grew (`MDB_MAP_RESIZED`, a bounded number of times) or clear dead processes' reader slots once (`MDB_READERS_FULL`).
/// Any other failure, or one that recurs past those bounds, is thrown.
struct ReadFailureRecovery {
    private var adoptions = 0
    private var clearedReaders = false

    /// Returns when a retry may succeed; throws `error` otherwise. The caller must not hold the gate.
    mutating func recover(from error: LMDBError, in environment: Environment, _ state: ThreadState) throws(LMDBError) {
        if error == .mapResized, adoptions < Environment.maxAdoptions {
            adoptions += 1
            try environment.adoptMapSizeOfOtherProcess(state)
        } else if error == .readersFull, !clearedReaders {
            clearedReaders = true
            environment.checkReaders()
        } else {
            throw error
        }
    }
}

// MARK: - Gate and growth

extension Environment {
    /// Bounds on the retry loops, so a pathological environment cannot spin forever.
    static let maxAdoptions = 8
    static let maxGrowthAttempts = 64

    func checkUsable() throws(LMDBError) {
        // lmdb.h: "Use an MDB_env* in the process which opened it, not after fork()."
        guard ForkGeneration.current == openForkGeneration else { throw .usedAfterFork }
        guard !isBroken.load(ordering: .relaxed) else { throw .panic }
    }

    /// Takes the gate shared unless this thread already holds it for this environment.
    func enterShared(_ state: ThreadState) {
        if state[environment: serial].gateDepth == 0 { gate.lockShared(stripe: state.stripe) }
        state[environment: serial].gateDepth += 1
    }

    func leaveShared(_ state: ThreadState) {
        state[environment: serial].gateDepth -= 1
        if state[environment: serial].gateDepth == 0 { gate.unlockShared(stripe: state.stripe) }
    }

    private func leaveWrite(_ state: ThreadState) {
        state[environment: serial].inWrite = false
        leaveShared(state)
    }

    /// Runs `body` with the gate held shared, for reads of the map outside a transaction
    /// (`mdb_env_info` and `mdb_env_stat` read the meta pages through the map).
    func withSharedGate<R>(_ body: () -> R) -> R {
        let state = ThreadState.current
        enterShared(state)
        defer { leaveShared(state) }
        return body()
    }

    /// Runs `body` with the gate held exclusively: no transaction of this process is live.
    /// Refused (with `refusal`) if this thread is inside a transaction of this environment, because waiting
    /// for the exclusive side while holding the shared side would deadlock.
    private func withExclusiveGate(
        _ state: ThreadState,
        refusal: LMDBError,
        _ body: () throws(LMDBError) -> Void
    ) throws(LMDBError) {
        guard state[environment: serial].gateDepth == 0 else { throw refusal }
        try gate.withExclusive(body)
    }

    /// The largest map a write of `purpose` may grow to: the cap, and for a write that frees space the reserve
    /// beyond it.
    func mapCap(for purpose: WritePurpose) -> Int {
        let cap = options.maximumMapSize
        guard purpose == .freeingSpace else { return Self.roundUpToOSPage(cap) }
        let (sum, overflow) = cap.addingReportingOverflow(options.reservedMapSize)
        return Self.roundUpToOSPage(overflow ? Int.max : sum)
    }

    /// Doubles the map, capped at the cap for `purpose`. `observedSize` is the size the failed transaction ran
    /// with; if another thread grew the map meanwhile, just retry.
    private func growMap(_ state: ThreadState, observedSize: Int, attempt: Int, purpose: WritePurpose) throws(LMDBError) {
        guard attempt <= Self.maxGrowthAttempts else { throw .mapFull }
        try withExclusiveGate(state, refusal: .mapFull) { () throws(LMDBError) in
            let current = Int(lmdb_env_info(handle).me_mapsize)
            guard current <= observedSize else { return }
            let cap = mapCap(for: purpose)
            guard current < cap else { throw .mapFull }
            let doubled = current > Int.max / 2 ? Int.max : current * 2
            try resizeMap(to: Self.roundUpToOSPage(min(doubled, cap)))
        }
    }

    /// After a write that may have grown the map into the reserve: sets it back to the cap, so that the next
    /// general write cannot use the reserve. LMDB never maps less than the data stored (`mdb_env_set_mapsize`
    /// rounds a smaller size up to it), so pages the freeing write needed stay mapped and fill up again with
    /// what later writes free. Best effort: if a transaction of this thread is live, the map stays as it is.
    private func returnMapToCap(_ state: ThreadState) {
        let cap = mapCap(for: .general)
        guard Int(lmdb_env_info(handle).me_mapsize) > cap else { return }
        try? withExclusiveGate(state, refusal: .mapFull) { () throws(LMDBError) in
            guard Int(lmdb_env_info(handle).me_mapsize) > cap else { return }
            try resizeMap(to: cap)
        }
    }

    /// lmdb.h: "If the mapsize is increased by another process, and data has grown beyond the range of the
    /// current mapsize, mdb_txn_begin() will return MDB_MAP_RESIZED. This function may be called with a size
    /// of zero to adopt the new size."
    func adoptMapSizeOfOtherProcess(_ state: ThreadState) throws(LMDBError) {
        try withExclusiveGate(state, refusal: .mapResized) { () throws(LMDBError) in
            try resizeMap(to: 0)
            // Another process's removal may have grown the map into the reserve: general writes here must not use it
            // (LMDB keeps the map at least as large as the data).
            let cap = mapCap(for: .general)
            if Int(lmdb_env_info(handle).me_mapsize) > cap { try resizeMap(to: cap) }
        }
    }

    /// Caller holds the gate exclusively.
    private func resizeMap(to size: Int) throws(LMDBError) {
        let rc = lmdb_env_set_mapsize(handle, size)
        guard rc == MDB_SUCCESS else {
            // EINVAL means a write transaction is active (impossible under the exclusive gate) and nothing
            // changed; any other failure comes from re-mapping after the old map was already unmapped.
            if rc != EINVAL { isBroken.store(true, ordering: .relaxed) }
            throw LMDBError(code: rc)
        }
    }

    /// LMDB 0.9 does not write "loose" pages (allocated and freed again in the same transaction), so a
    /// commit can leave `data.mdb` a page shorter than `(last_pgno + 1) * pagesize`. The open-time
    /// truncation check would then reject a healthy store. After a commit that left the file short, take the
    /// writer lock (so no other writer is extending the file) and grow the file with `ftruncate` on LMDB's
    /// own descriptor. Also run when a store is opened writable, for a file a writer killed between its commit and
    /// this step left short. Best effort; the caller holds the gate shared, as `mdb_env_info` reads the map.
    /// - Parameter takingWriterLock: whether to take the writer lock (`WriterLock`) first, bounded like every write's:
    ///   an open does; a write, which holds it already, does not. Not padded when it cannot be had in time.
    func padDataFileIfShort(takingWriterLock: Bool = false) {
        #if DEBUG
        if LMDBFaultInjection.consume(.padDataFile, env: handle) != nil { return }
        #endif
        guard let fd = lmdb_env_get_fd(handle), let needed = shortfall(fd: fd) else { return }
        let writerLock = takingWriterLock ? try? WriterLock.acquire(directory: directory, timeout: options.lockTimeout) : nil
        if takingWriterLock, writerLock == nil { return }
        defer { writerLock?.release() }
        var txn: OpaquePointer?
        guard lmdb_txn_begin(handle, readOnly: false, &txn) == MDB_SUCCESS, let txn else { return }
        if let stillNeeded = shortfall(fd: fd) {
            FileSystem.extend(fd: fd, to: max(needed, stillNeeded))
        }
        lmdb_txn_abort(txn)
    }

    /// Allocates ``EnvironmentOptions/reservedDiskSpace`` bytes of disk past the used end of `data.mdb`, so that
    /// a write freeing space finds room for the pages it copies even when the disk is full: `.noSpace` when the disk
    /// cannot hold them (a general write is then refused before it starts), nil otherwise. Filesystems without
    /// block allocation (and any other failure) leave the reserve to chance rather than refuse writes. Another
    /// process may commit between this and the transaction; the reserve is a margin, not a guarantee.
    private func allocateDiskReserve() -> LMDBError? {
        guard options.reservedDiskSpace > 0, !options.readOnly, let fd = lmdb_env_get_fd(handle) else { return nil }
        let usedEnd = (Int(lmdb_env_info(handle).me_last_pgno) + 1) * lmdb_env_page_size(handle)
        let wanted = usedEnd + options.reservedDiskSpace
        // Blocks once allocated stay allocated (the file only grows): most writes find their reserve in place.
        if wanted <= diskAllocatedThrough.load(ordering: .relaxed) { return nil }
        // Twice the reserve at a time, so that the call is made again only after a reserve's worth of growth.
        let rc = tc_allocate_blocks(fd, off_t(usedEnd), off_t(2 * options.reservedDiskSpace))
        if rc == 0 { diskAllocatedThrough.store(usedEnd + 2 * options.reservedDiskSpace, ordering: .relaxed) }
        if rc == ENOSPC, tc_allocate_blocks(fd, off_t(usedEnd), off_t(options.reservedDiskSpace)) == 0 {
            diskAllocatedThrough.store(wanted, ordering: .relaxed)
            return nil
        }
        return rc == ENOSPC ? LMDBError(code: ENOSPC) : nil
    }

    /// The length `data.mdb` should have, if it is currently shorter than that.
    private func shortfall(fd: Int32) -> Int? {
        let info = lmdb_env_info(handle)
        let needed = (Int(info.me_last_pgno) + 1) * lmdb_env_page_size(handle)
        guard let size = try? FileSystem.status(of: fd).size, size < needed else { return nil }
        return needed
    }

    static func roundUpToOSPage(_ size: Int) -> Int {
        let page = FileSystem.osPageSize
        guard size < Int.max - page else { return Int.max / page * page }
        return (max(size, page) + page - 1) / page * page
    }
}
