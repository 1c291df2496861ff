import Foundation
import HTTPTypes
import Hummingbird
import SupportConsole

/// The browser support console at `/console/` (and `GET /v1/whoami`, which it signs in
/// with). The page and its assets are open: they hold no data, and every call they make
/// goes through the token-checked API like any other client.
struct ConsoleRoutes: Sendable {
    let catalog: ConsoleAssetCatalog

    func register(on api: APIRoutes) {
        let open = api.open()
        open.get("/console") { request, _ in
            // Relative asset and API URLs need the trailing slash (Hummingbird matches
            // `/console` and `/console/` alike), so the bare path redirects like a directory.
            guard request.uri.path.hasSuffix("/") else {
                return Response(status: .permanentRedirect, headers: [.location: "console/", .cacheControl: "no-cache"])
            }
            return serve(catalog.index, request)
        }
        open.get("/console/{asset}") { request, context in
            let name = context.parameters.get("asset") ?? ""
            guard let asset = catalog[name] else {
                throw APIError.notFound("the console has no file '\(name)'; open /console/")
            }
            return serve(asset, request)
        }
        WhoAmIRoute().register(on: api)
    }

    /// Console responses may run only the console's own code and talk only to this daemon:
    /// a strict content security policy keeps an injected string from becoming a script
    /// that could read the token from session storage.
    static let securityHeaders: HTTPFields = [
        HTTPField.Name("Content-Security-Policy")!:
            "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
        HTTPField.Name("X-Content-Type-Options")!: "nosniff",
        HTTPField.Name("Referrer-Policy")!: "no-referrer",
    ]

    func serve(_ asset: ConsoleAsset?, _ request: Request) -> Response {
        guard let asset else { return Response(status: .notFound) }
        var headers = Self.securityHeaders
        headers[.eTag] = asset.etag
        // Revalidate every time: a daemon upgrade must never run a stale console.
        headers[.cacheControl] = "no-cache"
        if request.headers[.ifNoneMatch]?.split(separator: ",").contains(where: { $0.trimmingCharacters(in: .whitespaces) == asset.etag })
            == true
        {
            return Response(status: .notModified, headers: headers)
        }
        headers[.contentType] = asset.contentType
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: asset.bytes)))
    }
}
