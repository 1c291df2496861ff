/// One value for each environment, reachable by a subscript that cannot fail: code that
/// holds a database, a size or a count per environment never force-unwraps a dictionary
/// lookup, and adding an environment is a compile error everywhere it matters.
public struct PerEnvironment<Value> {
    public var prod: Value
    public var ppe: Value

    public init(prod: Value, ppe: Value) {
        self.prod = prod
        self.ppe = ppe
    }

    /// Builds each environment's value, prod first.
    public init(_ make: (TelemetryEnvironment) throws -> Value) rethrows {
        prod = try make(.prod)
        ppe = try make(.ppe)
    }

    public subscript(env: TelemetryEnvironment) -> Value {
        get {
            switch env {
            case .prod: prod
            case .ppe: ppe
            }
        }
        set {
            switch env {
            case .prod: prod = newValue
            case .ppe: ppe = newValue
            }
        }
    }

    /// Each environment's value transformed, keeping the environment.
    public func map<T>(_ transform: (Value) throws -> T) rethrows -> PerEnvironment<T> {
        PerEnvironment<T>(prod: try transform(prod), ppe: try transform(ppe))
    }

    /// The values as a dictionary, for encoders and callers that want one.
    public var dictionary: [TelemetryEnvironment: Value] { [.prod: prod, .ppe: ppe] }
}

extension PerEnvironment: Sendable where Value: Sendable {}
extension PerEnvironment: Equatable where Value: Equatable {}
extension PerEnvironment: Hashable where Value: Hashable {}
