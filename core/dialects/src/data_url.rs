//! Images as URLs (OpenAI Responses `input_image`, Chat Completions `image_url`): bytes travel
//! as `data:<type>;base64,<bytes>` URLs, any other URL stays a URL.

use handoff_transcript::Part;

/// The `data:` URL of image bytes.
pub fn data_url(media_type: &str, data: &[u8]) -> String {
    let mut url = format!("data:{media_type};base64,");
    handoff_transcript::base64::encode_into(data, &mut url);
    url
}

/// The URL an image part travels as: a `data:` URL for bytes, else the URL itself. `None` for
/// a part that is not an image.
pub fn image_url(part: &Part) -> Option<String> {
    match part {
        Part::Image { media_type, data } => Some(data_url(media_type, data)),
        Part::ImageUrl { url } => Some(url.clone()),
        Part::Text { .. } => None,
    }
}

/// A `data:<type>;base64,<bytes>` URL becomes image bytes; any other URL stays a URL.
pub fn image_part(url: &str) -> Result<Part, String> {
    let Some(rest) = url.strip_prefix("data:") else {
        return Ok(Part::ImageUrl {
            url: url.to_owned(),
        });
    };
    let (media_type, data) = rest.split_once(";base64,").ok_or_else(|| {
        "a data: URL that is not base64 (expected data:<type>;base64,…)".to_owned()
    })?;
    let data = handoff_transcript::base64::decode(data.as_bytes())
        .map_err(|e| format!("the image data is not base64: {e}"))?;
    Ok(Part::Image {
        media_type: media_type.to_owned(),
        data,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_round_trip_through_a_data_url_and_other_urls_stay() {
        let part = Part::Image {
            media_type: "image/png".into(),
            data: vec![0, 1, 254],
        };
        let url = image_url(&part).unwrap();
        assert!(url.starts_with("data:image/png;base64,"));
        assert_eq!(image_part(&url).unwrap(), part);
        assert_eq!(
            image_part("https://x/y.png").unwrap(),
            Part::ImageUrl {
                url: "https://x/y.png".into()
            }
        );
        assert!(image_part("data:image/png,raw").is_err());
        assert!(image_part("data:image/png;base64,!!").is_err());
    }
}
