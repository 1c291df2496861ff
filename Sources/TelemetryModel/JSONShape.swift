/// Layout helpers for stored records: the one-line form a record is stored in.
enum JSONShape {
    /// Drops the whitespace runs the scanner found outside strings (`ScannedRecord.layout`),
    /// so a pretty-printed array element becomes one line.
    static func compact(_ b: UnsafeBufferPointer<UInt8>, removing layout: [Range<Int>]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(b.count)
        var kept = 0
        for run in layout {
            out.append(contentsOf: UnsafeBufferPointer(rebasing: b[kept..<run.lowerBound]))
            kept = run.upperBound
        }
        out.append(contentsOf: UnsafeBufferPointer(rebasing: b[kept..<b.count]))
        return out
    }
}

enum ShapeError: Error {
    case notAnObject
    case tooDeep(Int)
    case tooManyFields(Int)
    case stringTooLong(Int)
    case syntax(String)

    var message: String {
        switch self {
        case .notAnObject: "not a JSON object"
        case .tooDeep(let n): "JSON nesting deeper than the limit maxDepth=\(n)"
        case .tooManyFields(let n): "more fields than the limit maxFields=\(n)"
        case .stringTooLong(let n): "a string is longer than the limit maxStringBytes=\(n)"
        case .syntax(let why): "not valid JSON: \(why)"
        }
    }
}
