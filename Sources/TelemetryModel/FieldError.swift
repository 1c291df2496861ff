import Foundation

struct FieldError: Error {
    let message: String
    init(_ message: String) { self.message = message }
}

/// Reports a decoding failure as a short sentence a client developer can act on.
func describe(_ error: any Error) -> String {
    (error as? FieldError)?.message ?? "not valid JSON"
}
