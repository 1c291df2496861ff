import ClickHouseStore
import Hummingbird
import Logging
import StoreCore

/// The answer to an error no route turned into an `APIError`: a store or backend failure,
/// or a bug. A read ClickHouse could not answer because it is unreachable or did not answer
/// in time is a 503 naming ClickHouse (`clickhouse_unavailable`, with `Retry-After`): the
/// collector is fine and the client should retry. A rollup rebuild on the ClickHouse backend,
/// which keeps none, is a 409 `no_rollups` saying so. Anything else is a 500 `internal_error`.
/// Either way the message is `StoreFailure`'s: no statement text, bound value or backend
/// answer is ever written to a client (a database error's own description quotes the SQL);
/// the whole error goes to the daemon's log.
struct StoreErrorMiddleware<Context: RequestContext>: RouterMiddleware {
    var retryAfterSeconds = 5
    let logger: Logger

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as any HTTPResponseError {
            throw error
        } catch let error as ClickHouseError {
            switch error {
            case .unreachable, .timeout:
                throw APIError(
                    .serviceUnavailable, code: "clickhouse_unavailable",
                    message: "the store cannot answer: \(StoreFailure.clientDescription(of: error)); retry later",
                    headers: [.retryAfter: String(retryAfterSeconds)])
            case .server, .badResponse:
                throw internalError(error, request)
            }
        } catch let error as RollupsNotKept {
            throw APIError(.conflict, code: "no_rollups", message: error.clientDescription)
        } catch {
            throw internalError(error, request)
        }
    }

    private func internalError(_ error: any Error, _ request: Request) -> APIError {
        logger.error("request failed", metadata: ["route": "\(request.method) \(request.uri.path)", "error": "\(error)"])
        return APIError(
            .internalServerError, code: "internal_error",
            message: "the daemon could not answer: \(StoreFailure.clientDescription(of: error)); its log has the details")
    }
}
