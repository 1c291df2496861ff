/// Why the cursor refused a text; `message` is what the client is told for its line.
enum ShapeError: Error {
    case notAnObject
    case tooDeep(Int)
    case tooManyFields(Int)
    case stringTooLong(Int)
    case syntax(String)
    /// The member (a path like `data.statusCode`) appears twice in one object.
    case duplicateMember(String)
    /// A string of the member holds an escape that is not Unicode (a lone surrogate).
    case invalidUnicode(String, String)
    /// A number of the member is past a double's range (`1e400`).
    case notFinite(String, String)

    var message: String {
        switch self {
        case .notAnObject: "not a JSON object"
        case .tooDeep(let n): "JSON nesting deeper than the limit maxDepth=\(n)"
        case .tooManyFields(let n): "more fields than the limit maxFields=\(n)"
        case .stringTooLong(let n): "a string is longer than the limit maxStringBytes=\(n)"
        case .syntax(let why): "not valid JSON: \(why)"
        case .duplicateMember(let path): "duplicate member \(path): a member name may appear only once in an object"
        case .invalidUnicode(let path, let why): "\(path): invalid Unicode: \(why)"
        case .notFinite(let path, let text):
            "\(path): the number \(InterpretedField.clip(text)) is outside the range of a double (about ±1.8e308)"
        }
    }
}
