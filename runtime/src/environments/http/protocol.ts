/** The `protocol` of HttpInvokeRequest bodies (the Application tool extension's wire version). */
export const PROTOCOL_HTTP = "brain.http/0.2";
