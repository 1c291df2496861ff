import ClickHouseStore
import Hummingbird

/// A read the ClickHouse backend could not answer because ClickHouse is unreachable or did
/// not answer in time is a 503 naming ClickHouse (`clickhouse_unavailable`, with
/// `Retry-After`), not an anonymous 500: the collector is fine and the client should retry.
/// Server-side ClickHouse errors (a bad statement, a schema problem) stay 500s.
struct BackendUnavailableMiddleware<Context: RequestContext>: RouterMiddleware {
    var retryAfterSeconds = 5

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as ClickHouseError {
            switch error {
            case .unreachable, .timeout:
                throw APIError(
                    .serviceUnavailable, code: "clickhouse_unavailable", message: "the store cannot answer: \(error)",
                    headers: [.retryAfter: String(retryAfterSeconds)])
            case .server, .badResponse:
                throw error
            }
        }
    }
}
