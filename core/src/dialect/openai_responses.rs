//! The OpenAI Responses dialect (work in progress).
