import StoreCore

/// What a query needs of the SQLite engine's per-batch Bloom filters: the terms a batch must
/// (probably) hold to be worth decoding. The filters are the engine's own index, so the
/// neutral query only names the fields these are derived from.
extension RecordQuery {
    /// The Bloom terms a batch must (probably) contain to hold a match.
    var requiredTerms: [BloomTerm] {
        var t: [BloomTerm] = []
        if let app {
            t.append(.app(app))
        } else if let apps, apps.count == 1, let only = apps.first {
            t.append(.app(only))
        }
        if let device { t.append(.device(device)) }
        if let session { t.append(.session(session)) }
        if let identity, identityDevices == nil { t.append(.identity(identity)) }
        if let name { t.append(.name(name)) }
        if let statusCode { t.append(.statusCode(statusCode)) }
        if let incident { t.append(.incident(incident)) }
        return t
    }

    /// Terms of which a batch must (probably) contain one: the identity or one of its devices.
    var anyOfTerms: [BloomTerm]? {
        guard let identity, let identityDevices else { return nil }
        return [.identity(identity)] + identityDevices.map { .device($0) }
    }
}

extension IdentitySelector {
    /// The Bloom term every batch holding the user's records contains; nil for a pseudonym,
    /// which names no stored value.
    var bloomTerm: BloomTerm? {
        if case .identity(let value) = self { return .identity(value) }
        return nil
    }
}
