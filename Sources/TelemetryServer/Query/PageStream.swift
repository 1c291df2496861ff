import HTTPTypes
import Hummingbird
import StoreCore
import Synchronization
import TelemetryModel

/// `GET /v1/events` and `/v1/logs` without `follow`: one page streamed while the store reads
/// it, so the first records leave within milliseconds however large the page. The records
/// are rendered straight into one buffer as the store visits them (no copy per record) and
/// written in chunks. Headers wait until the answer is known to be good — the first chunk
/// is ready, or for NDJSON the page's cursor (sent as `Next-Cursor`), which the store finds
/// from the keys in the same snapshot before reading any record — so a failing read is
/// still a proper error status. With a `contains` filter the cursor needs the records'
/// text, so an NDJSON page is then gathered whole before its headers go out.
struct PageStream: Sendable {
    let store: any RecordStore
    let query: RecordQuery
    /// `events` or `logs`: the member holding the records of a JSON page.
    let member: String
    let ndjson: Bool
    /// Bytes gathered before the first write (small: the first byte leaves early) and each later one.
    var firstChunk = 16 << 10
    var chunk = 256 << 10
    /// A JSON page's `search` member (what was searched, `SearchDescription`), written after
    /// the records; nil leaves it out.
    var search: [UInt8]?

    func response() async throws -> Response {
        let (chunks, output) = AsyncThrowingStream<ByteBuffer, any Error>.makeStream()
        let query = self.query
        let search = self.search
        let cursor: Int64? = try await withCheckedThrowingContinuation { ready in
            let gatherer = PageGatherer(
                ndjson: ndjson, prefix: ndjson ? [] : Array("{\"\(member)\":[".utf8), firstChunk: firstChunk, chunk: chunk,
                ready: ready, output: output)
            let store = self.store
            // Unstructured so the response can start while the store reads; the page is bounded
            // by `limit`, so a client that leaves early costs at most the rest of one page.
            Task {
                do {
                    let next = try await store.scan(query, announcePageEnd: ndjson) { gatherer.take($0) }
                    gatherer.finish(next: next, tail: ndjson ? [] : Self.jsonTail(next, query: query, search: search))
                } catch {
                    gatherer.fail(error)
                }
            }
        }
        var headers: HTTPFields = [:]
        headers[.contentType] = ndjson ? "application/x-ndjson" : "application/json"
        if ndjson, let cursor { headers[HTTPField.Name("Next-Cursor")!] = Cursor.encode(after: cursor, for: query) }
        return Response(
            status: .ok, headers: headers,
            body: ResponseBody { writer in
                for try await chunk in chunks { try await writer.write(chunk) }
                try await writer.finish(nil)
            })
    }

    /// `],"nextCursor":...,"search":...}` closing a JSON page.
    static func jsonTail(_ next: Int64?, query: RecordQuery, search: [UInt8]? = nil) -> [UInt8] {
        var out = Array("],\"nextCursor\":".utf8)
        out += next.map { JSONWriter.quoted(Cursor.encode(after: $0, for: query)) } ?? Array("null".utf8)
        if let search { out += Array(",\"search\":".utf8) + search }
        out += Array("}\n".utf8)
        return out
    }
}

/// The store's visitor for one page: renders records into chunks on the reader thread and
/// hands them to the response; tells the route once when its headers can go out.
private final class PageGatherer: Sendable {
    private struct State {
        var writer: RecordLineWriter
        var records = 0
        var threshold: Int
        /// Resumed once: with the cursor (NDJSON) or as soon as the first chunk is out.
        var ready: CheckedContinuation<Int64?, any Error>?
    }

    private let state: Mutex<State>
    private let output: AsyncThrowingStream<ByteBuffer, any Error>.Continuation
    private let ndjson: Bool
    private let chunk: Int

    init(
        ndjson: Bool, prefix: [UInt8], firstChunk: Int, chunk: Int, ready: CheckedContinuation<Int64?, any Error>,
        output: AsyncThrowingStream<ByteBuffer, any Error>.Continuation
    ) {
        var writer = RecordLineWriter(capacity: chunk + (64 << 10))
        writer.append(raw: prefix)
        state = Mutex(State(writer: writer, threshold: firstChunk, ready: ready))
        self.output = output
        self.ndjson = ndjson
        self.chunk = chunk
    }

    func take(_ event: ScanEvent) {
        state.withLock { s in
            switch event {
            case .pageEnd(let next):
                s.ready?.resume(returning: next)
                s.ready = nil
            case .record(let record):
                if !ndjson, s.records > 0 { s.writer.append(raw: CollectionOfOne(UInt8(ascii: ","))) }
                s.writer.append(record)
                if ndjson { s.writer.append(raw: CollectionOfOne(0x0A)) }
                s.records += 1
                if s.writer.count >= s.threshold, ndjson ? s.ready == nil : true {
                    output.yield(s.writer.drainToByteBuffer())
                    s.threshold = chunk
                    // A JSON page's headers carry nothing the rest could change.
                    if !ndjson {
                        s.ready?.resume(returning: nil)
                        s.ready = nil
                    }
                }
            }
        }
    }

    func finish(next: Int64?, tail: [UInt8]) {
        state.withLock { s in
            s.writer.append(raw: tail)
            output.yield(s.writer.drainToByteBuffer())
            output.finish()
            s.ready?.resume(returning: next)
            s.ready = nil
        }
    }

    /// Before the headers: the route answers with the error's status. After: the body
    /// ends early, which the client sees as a broken response rather than a short page.
    func fail(_ error: any Error) {
        state.withLock { s in
            if let ready = s.ready {
                ready.resume(throwing: error)
                s.ready = nil
            }
            output.finish(throwing: error)
        }
    }
}

extension RecordLineWriter {
    /// What was written, as one buffer for the response, leaving this writer empty with its
    /// capacity: the chunk is copied once, and the writer's buffer is reused for the next
    /// one instead of a new quarter-megabyte array (and its page faults) per chunk.
    fileprivate mutating func drainToByteBuffer() -> ByteBuffer {
        let buffer = bytes.withUnsafeBytes { ByteBuffer(bytes: $0) }
        clear()
        return buffer
    }
}
