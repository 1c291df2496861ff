import Foundation
import HTTPTypes
import Hummingbird

extension Response {
    /// A JSON answer from bytes the caller already encoded.
    static func json(_ bytes: [UInt8], status: HTTPResponse.Status = .ok, headers: HTTPFields = [:]) -> Response {
        var headers = headers
        headers[.contentType] = "application/json"
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
    }

    /// A JSON answer from an Encodable value (small control-plane answers).
    static func json(_ value: some Encodable, status: HTTPResponse.Status = .ok) throws -> Response {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        var data = try encoder.encode(value)
        data.append(0x0A)
        return .json([UInt8](data), status: status)
    }
}
